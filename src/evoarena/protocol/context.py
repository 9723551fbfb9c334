"""The practice context the runner hands a method (`api.PracticeContext`): its harness, its role models, and
train/val tasks only."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from evoarena.api import Attempt, Benchmark, Feedback, Method, Reply, Task, TaskView, TestSplitLocked
from evoarena.harness import HarnessWorkspace
from evoarena.models import Message, ModelCallError, RoleModel
from evoarena.protocol.budget import BudgetMeter
from evoarena.protocol.evaluate import attempt_row
from evoarena.protocol.solve import solve
from evoarena.store import AttemptRow


class _Grader:
    """Grades train/val tasks. It holds no test task and no handle to the benchmark's generator."""

    def __init__(self, tasks: Mapping[str, Task], grade: Callable[..., Feedback]) -> None:
        self._tasks = dict(tasks)
        self._grade = grade
        self._memo: dict[tuple[str, str | None, int], Feedback] = {}

    def task(self, task_id: str) -> Task:
        if task_id not in self._tasks:
            raise TestSplitLocked(f"task {task_id!r} is not a train/val task; methods cannot grade it")
        return self._tasks[task_id]

    def grade(self, task_id: str, answer: str | None, attempt: int = 1) -> Feedback:
        """Memoised: grading may run programs in the sandbox, and a method asks again for the same attempt."""
        key = (task_id, answer, attempt)
        if key not in self._memo:
            self._memo[key] = self._grade(self.task(task_id), answer, attempt=attempt)
        return self._memo[key]


class StepContext:
    """Handed to `Method.practice` for one step (implements `api.PracticeContext`). Every write goes through
    `harness`; every call through `ask` or `model(role)`; every submitted attempt through `solve`, every internal
    evaluation through `rollout` (both counted against the cell's budget)."""

    def __init__(
        self,
        *,
        method: Method,
        benchmark: Benchmark,
        harness: HarnessWorkspace,
        models: Mapping[str, RoleModel],
        grader: _Grader,
        train: tuple[TaskView, ...],
        val: tuple[TaskView, ...],
        meter: BudgetMeter,
        rng: random.Random,
        step: int,
        version_id: str,
        update_note: str | None = None,
        attempt_limit: int | None = None,
        first_attempt: int = 1,
        on_event: Callable[[str, dict[str, Any]], None] = lambda kind, payload: None,
    ) -> None:
        self.harness = harness
        self.train = train
        self.val = val
        self.rng = rng
        self.step = step
        self.update_note = update_note
        self._method = method
        self._benchmark = benchmark  # locked by the runner: it can no longer generate tasks
        self._models = dict(models)
        self._grader = grader
        self._meter = meter
        self._version_id = version_id
        self._on_event = on_event
        self.attempt_rows: list[AttemptRow] = []
        self.rejections = 0
        self.attempt_limit = attempt_limit  # attempts allowed in this step (None: as the method likes)
        self._first_attempt = first_attempt  # the stage's attempt number of this step's first solve
        self._submitted: dict[str, int] = {}

    def model(self, role: str) -> RoleModel:
        if role not in self._models:
            raise KeyError(f"role {role!r} is not mapped to a model in the spec (roles: {sorted(self._models)})")
        return self._models[role]

    def ask(
        self,
        role: str,
        prompt: str,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: tuple[str, ...] | None = None,
        sample_index: int = 0,
        note: bool = True,
        reject_cut_off: str | None = None,
    ) -> Reply | None:
        """See `api.PracticeContext.ask`: the update note in front, provider errors as None, cut-offs rejected."""
        if note and self.update_note:
            prompt = f"{self.update_note.strip()}\n\n{prompt}"
        model = self.model(role)
        params = model.default_params
        overrides: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature, "stop": stop}
        params = replace(params, **{k: v for k, v in overrides.items() if v is not None})
        try:
            out = model.complete([Message("user", prompt)], params, sample_index=sample_index)
        except ModelCallError:
            return None
        reply = Reply(out.text, out.finish_reason, getattr(out, "call_id", None))
        if reject_cut_off is not None and reply.cut_off:
            self.reject(reject_cut_off, reply.text, f"{reject_cut_off} cut off at max_tokens={params.max_tokens}")
            return None
        return reply

    def solve(self, task: TaskView, *, tree: Mapping[str, str] | None = None, sample_index: int = 0) -> Attempt:
        """One submitted attempt with the current harness (or `tree`): counted against the step's
        `attempt_limit` and recorded as a practice row; under the curriculum protocol it decides the stage."""
        if self.attempt_limit is not None and self.submitted >= self.attempt_limit:
            raise RuntimeError(f"this practice step allows {self.attempt_limit} attempt(s); check ctx.attempt_limit")
        self._grader.task(task.id)
        number = self._first_attempt + self._submitted.get(task.id, 0)
        self._submitted[task.id] = self._submitted.get(task.id, 0) + 1
        return self._run(task, tree, sample_index, number, "practice")

    def rollout(self, task: TaskView, *, tree: Mapping[str, str] | None = None, sample_index: int = 0) -> Attempt:
        """One internal evaluation (GEPA's minibatch and val scores, EvoSkill's validation, a GRPO group's other
        samples, ACE's re-generation): graded like the step's current attempt but never submitted, so it does
        not use up `attempt_limit` nor decide a stage. It still counts against the cell's budget."""
        self._grader.task(task.id)
        number = self._first_attempt + max(self._submitted.get(task.id, 0) - 1, 0)
        return self._run(task, tree, sample_index, number, "rollout")

    @property
    def submitted(self) -> int:
        """Submitted attempts so far in this step."""
        return sum(self._submitted.values())

    def _run(
        self, task: TaskView, tree: Mapping[str, str] | None, sample_index: int, number: int, phase: str
    ) -> Attempt:
        self._meter.before_attempt()
        use_tree = self.harness.tree() if tree is None else tree
        attempt = solve(self._method, self._benchmark, use_tree, task, self.model("solver"), sample_index=sample_index)
        attempt = replace(attempt, number=number)
        fb = None if attempt.error else self._grader.grade(task.id, attempt.answer, number)
        version = self._version_id if tree is None else "custom"
        self.attempt_rows.append(attempt_row(attempt, fb, phase=phase, task_id=task.id, version_id=version))
        return attempt

    def feedback(self, task: TaskView, attempt: Attempt) -> Feedback:
        """Grader feedback for a train/val attempt. A provider error is not feedback: it raises."""
        if attempt.error:
            raise RuntimeError(f"attempt on {task.id} had a provider error; it cannot be graded")
        return self._grader.grade(task.id, attempt.answer, attempt.number)

    def observation(self, task: TaskView, attempt: Attempt) -> str | None:
        """The execution output of a train/val attempt (`Benchmark.observation`); None where answers are only
        graded or the attempt had a provider error."""
        if attempt.error:
            return None
        return self._benchmark.observation(self._grader.grade(task.id, attempt.answer, attempt.number))

    def label(self, task: TaskView) -> str:
        """The reference answer of a train task (as DSPy's labeled demos use). Val and test are refused."""
        t = self._grader.task(task.id)
        if t.split != "train":
            raise TestSplitLocked(f"labels are only available for train tasks, not {t.split}")
        return t.reference

    def reject(self, what: str, raw: str, reason: str) -> None:
        """Record malformed model output that the method refused to adopt."""
        self.rejections += 1
        self._on_event("rejected_output", {"what": what, "reason": reason, "raw": raw[:4000]})

    def log(self, kind: str, payload: dict[str, Any]) -> None:
        self._on_event(kind, payload)
