"""The cell's side of one practice step: the only holder of the benchmark, the grader, the role models (and through
them the ledger and the store) and the budget meter. A method reaches it only through `channel.Port` requests."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from evoarena.api import Benchmark, Feedback, Method, Task, TestSplitLocked
from evoarena.models import RoleModel
from evoarena.protocol.budget import BudgetMeter
from evoarena.protocol.evaluate import attempt_row
from evoarena.protocol.solve import solve
from evoarena.store import AttemptRow


class Grader:
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


class StepService:
    """Answers a step's requests (`handle(op, args)`); keeps the attempt rows and the rejection count the cell
    records when the step ends."""

    def __init__(
        self,
        *,
        method: Method,
        benchmark: Benchmark,
        models: Mapping[str, RoleModel],
        grader: Grader,
        meter: BudgetMeter,
        on_event: Callable[[str, dict[str, Any]], None],
    ) -> None:
        self._method = method  # its build_messages assembles solver prompts, as at test
        self._benchmark = benchmark
        self._models = dict(models)
        self._grader = grader
        self._meter = meter
        self._on_event = on_event
        self.attempt_rows: list[AttemptRow] = []
        self.rejections = 0

    def handle(self, op: str, args: dict[str, Any]) -> Any:
        handler = getattr(self, f"_op_{op}", None)
        if handler is None:
            raise ValueError(f"unknown request {op!r}")
        return handler(**args)

    def _op_complete(self, role: str, messages: Any, params: Any, sample_index: int) -> Any:
        return self._models[role].complete(messages, params, sample_index=sample_index)

    def _op_check(self, task_id: str) -> None:
        self._grader.task(task_id)

    def _op_attempt(self, task: Any, tree: Mapping[str, str], sample_index: int, number: int, phase: str,
                    version: str) -> Any:
        self._grader.task(task.id)
        self._meter.before_attempt()
        attempt = solve(self._method, self._benchmark, tree, task, self._models["solver"], sample_index=sample_index)
        attempt = replace(attempt, number=number)
        fb = None if attempt.error else self._grader.grade(task.id, attempt.answer, number)
        self.attempt_rows.append(attempt_row(attempt, fb, phase=phase, task_id=task.id, version_id=version))
        return attempt

    def _op_grade(self, task_id: str, answer: str | None, number: int) -> Feedback:
        return self._grader.grade(task_id, answer, number)

    def _op_observation(self, task_id: str, answer: str | None, number: int) -> str | None:
        return self._benchmark.observation(self._grader.grade(task_id, answer, number))

    def _op_label(self, task_id: str) -> str:
        t = self._grader.task(task_id)
        if t.split != "train":
            raise TestSplitLocked(f"labels are only available for train tasks, not {t.split}")
        return t.reference

    def _op_event(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == "rejected_output":
            self.rejections += 1
        self._on_event(kind, payload)

