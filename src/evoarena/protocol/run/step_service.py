"""The cell's side of one practice step: the only holder of the benchmark, the grader, the role models (and through
them the ledger and the store) and the budget meter. A method reaches it only through `channel.Port` requests
(`boundary.ops`, checked on arrival by their types); attempt numbers, the step's attempt limit and the harness
version an attempt ran on are decided here, not by the method."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from evoarena.api import Attempt, Benchmark, Feedback, Method, Task, TestSplitLocked
from evoarena.harness import tree_hash
from evoarena.models import Completion, GenParams, Message, ModelCallError, RoleModel
from evoarena.protocol.boundary.ops import (
    AddCandidate,
    ChatMany,
    Complete,
    CompleteMany,
    Event,
    Grade,
    Label,
    MakeAttempt,
    Observe,
    RolloutItem,
    Rollouts,
    Server,
    handles,
)
from evoarena.protocol.budget import BudgetExhausted, BudgetMeter
from evoarena.protocol.run.evaluate import attempt_row
from evoarena.protocol.scheduler import SERIAL, Scheduler
from evoarena.protocol.solve.solve import solve
from evoarena.store import AttemptRow
from evoarena.store.run_events import TYPED_KINDS

#: the event kinds the runner writes (the run's lifecycle, its executor, probes, each cell's method isolation, budget
#: and provider stops, rollbacks): a method may not log them (`tests/security/test_runner_records.py` checks that
#: every kind the source writes is here)
RUNNER_EVENTS = TYPED_KINDS | {"executor", "budget_exhausted", "provider_unavailable", "rollback"}
"""Event kinds only the runner writes: the typed ones (store.run_events) and the plain ones it logs itself."""


class Grader:
    """Grades train/val tasks. It holds no test task and no handle to the benchmark's generator."""

    def __init__(self, tasks: Mapping[str, Task], grade: Callable[..., Feedback]) -> None:
        self._tasks = dict(tasks)
        self._grade = grade
        self._memo: dict[tuple[str, str | None, int], Feedback] = {}

    def task(self, task_id: str) -> Task:
        if not isinstance(task_id, str) or task_id not in self._tasks:
            raise TestSplitLocked(f"task {task_id!r} is not a train/val task; methods cannot grade it")
        return self._tasks[task_id]

    def grade(self, task_id: str, answer: str | None, attempt: int = 1) -> Feedback:
        """Memoised: grading may run programs in the sandbox, and a method asks again for the same attempt."""
        key = (task_id, answer, attempt)
        if key not in self._memo:
            self._memo[key] = self._grade(self.task(task_id), answer, attempt=attempt)
        return self._memo[key]


class StepService(Server):
    """Answers a step's requests (`answer(op)`, by the op's type); keeps the attempt rows and the rejection count the
    cell records when the step ends."""

    def __init__(
        self,
        *,
        method: Method,
        benchmark: Benchmark,
        models: Mapping[str, RoleModel],
        grader: Grader,
        meter: BudgetMeter,
        on_event: Callable[[str, dict[str, Any]], None],
        current_tree: Callable[[], Mapping[str, str]],
        version_id: str,
        attempt_limit: int | None = None,
        first_attempt: int = 1,
        scheduler: Scheduler = SERIAL,
    ) -> None:
        self._scheduler = scheduler  # runs a batch's rollouts or calls concurrently; results kept in request order
        self._method = method  # its build_messages assembles solver prompts, as at test
        self._benchmark = benchmark
        self._models = dict(models)
        self._grader = grader
        self._meter = meter
        self._on_event = on_event
        self._current_tree = current_tree
        self._version_id = version_id
        self._attempt_limit = attempt_limit
        self._first_attempt = first_attempt
        self._submitted: dict[str, int] = {}
        self.attempt_rows: list[AttemptRow] = []
        self.rejections = 0
        self._last_role: str | None = None  # the role of the method's last model call, named by its rejections
        self.candidates: list[Candidate] = []  # saved as versions with the step's unit

    @handles(Complete)
    def _complete(self, op: Complete) -> Completion:
        self._last_role = op.role
        return self._role_model(op.role).complete(list(op.messages), op.params, sample_index=op.sample_index)

    def _role_model(self, role: str) -> RoleModel:
        if role not in self._models:
            raise KeyError(f"role {role!r} is not mapped to a model in the spec (roles: {sorted(self._models)})")
        return self._models[role]

    @handles(MakeAttempt)
    def _attempt(self, op: MakeAttempt) -> Attempt:
        """A submitted attempt (`submit`: counted against the step's limit, numbered in its stage) or a rollout
        (graded like the step's current attempt, never submitted)."""
        if not op.submit:
            item = RolloutItem(task_id=op.task_id, tree=op.tree, sample_index=op.sample_index)
            return self._rollouts(Rollouts(items=(item,)))[0]
        task = self._grader.task(op.task_id)
        done = self._submitted.get(task.id, 0)
        if self._attempt_limit is not None and sum(self._submitted.values()) >= self._attempt_limit:
            raise RuntimeError(f"this practice step allows {self._attempt_limit} attempt(s); check ctx.attempt_limit")
        self._submitted[task.id] = done + 1
        self._meter.before_attempt()
        attempt, row = self._graded(task, self._tree(op.tree), op.sample_index, self._first_attempt + done, True,
                                    op.tree is None)
        self.attempt_rows.append(row)
        return attempt

    @handles(Rollouts)
    def _rollouts(self, op: Rollouts) -> list[Attempt]:
        """Rollouts run by the scheduler. Everything order-dependent happens here first, in request order: the tasks
        checked, the numbers given, the budget reserved (as many as it allows; a refusal is raised after those ran, as
        the sequential rollouts would have). The rows are recorded in request order."""
        plan = []
        for item in op.items:
            task = self._grader.task(item.task_id)
            number = self._first_attempt + max(self._submitted.get(task.id, 0) - 1, 0)
            plan.append((task, self._tree(item.tree), item.sample_index, number, item.tree is None))
        refused: BudgetExhausted | None = None
        allowed = 0
        for _ in plan:
            try:
                self._meter.before_attempt()
            except BudgetExhausted as err:
                refused = err
                break
            allowed += 1
        done = self._scheduler.map(lambda p: self._graded(p[0], p[1], p[2], p[3], False, p[4]), plan[:allowed])
        self.attempt_rows.extend(row for _, row in done)
        if refused is not None:
            raise refused
        return [attempt for attempt, _ in done]

    def _tree(self, tree: dict[str, str] | None) -> dict[str, str]:
        return dict(self._current_tree()) if tree is None else dict(tree)

    def _graded(self, task: Task, tree: dict[str, str], sample_index: int, number: int, submit: bool,
                live: bool) -> tuple[Attempt, AttemptRow]:
        """One solver attempt on `tree` and its grading; `live`: the tree is the step's current version."""
        attempt = solve(self._method, self._benchmark, tree, task.view(), self._models["solver"],
                        sample_index=sample_index, roles=self._models)
        attempt = replace(attempt, number=number)
        fb = None if attempt.error else self._grader.grade(task.id, attempt.answer, number)
        phase = "practice" if submit else "rollout"
        version = self._version_id if live else tree_hash(tree)  # a candidate's content address (see `candidate`)
        return attempt, attempt_row(attempt, fb, phase=phase, task_id=task.id, version_id=version)

    @handles(CompleteMany)
    def _complete_many(self, op: CompleteMany) -> list[Completion | None]:
        """One user-message call per prompt, made by the scheduler; None where a call failed after its retries."""
        return self._calls(op.role, [[Message("user", p)] for p in op.prompts], op.params, op.sample_indices)

    @handles(ChatMany)
    def _chat_many(self, op: ChatMany) -> list[Completion | None]:
        """One call per conversation (tools in the params), made by the scheduler; None where a call failed after
        its retries."""
        return self._calls(op.role, [list(c) for c in op.conversations], op.params, op.sample_indices)

    def _calls(self, role: str, chats: list[list[Message]], gen: GenParams,
               sample_indices: tuple[int, ...]) -> list[Completion | None]:
        model = self._role_model(role)
        self._last_role = role

        def one(pair: tuple[list[Message], int]) -> Completion | None:
            try:
                return model.complete(pair[0], gen, sample_index=pair[1])
            except ModelCallError:
                return None

        return self._scheduler.map(one, list(zip(chats, sample_indices, strict=True)))

    @handles(Grade)
    def _grade(self, op: Grade) -> Feedback:
        return self._grader.grade(op.task_id, op.answer, op.number)

    @handles(Observe)
    def _observation(self, op: Observe) -> str | None:
        return self._benchmark.observation(self._grader.grade(op.task_id, op.answer, op.number))

    @handles(Label)
    def _label(self, op: Label) -> str:
        t = self._grader.task(op.task_id)
        if t.split != "train":
            raise TestSplitLocked(f"labels are only available for train tasks, not {t.split}")
        return t.reference

    @handles(AddCandidate)
    def _candidate(self, op: AddCandidate) -> str:
        kept = Candidate(self._tree(op.tree), op.parents, op.intent, op.evidence)
        self.candidates.append(kept)
        return tree_hash(kept.tree)

    @handles(Event)
    def _event(self, op: Event) -> None:
        """A method's event (`ctx.log`, `ctx.reject`), stored as the method's; a kind the runner writes is refused. A
        rejection names the role of the method's last model call in this step unless it names one itself."""
        if op.kind in RUNNER_EVENTS:
            raise ValueError(f"ctx.log: event kind {op.kind!r} is written by the runner only; log under a name of "
                             "the method's own")
        payload = dict(op.payload)
        if op.kind == "rejected_output":
            self.rejections += 1
            payload.setdefault("role", self._last_role)
        self._on_event(op.kind, payload)


@dataclass(frozen=True)
class Candidate:
    """A harness a method searches over, kept in the archive with the step's unit."""

    tree: dict[str, str]
    parents: tuple[str, ...]
    intent: str
    evidence: str

