"""Grading a harness version on a set of tasks (val for selection, test in the evaluator only)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from evoarena.api import Attempt, Benchmark, Feedback, Task
from evoarena.models import RoleModel, attributed
from evoarena.protocol.solve.solve import solve
from evoarena.store import AttemptRow

if TYPE_CHECKING:
    from evoarena.api import Method
    from evoarena.protocol.scheduler import Scheduler
    from evoarena.protocol.splits import LockedTestSplit


def attempt_row(attempt: Attempt, fb: Feedback | None, *, phase: str, task_id: str, version_id: str) -> AttemptRow:
    """The stored row of a graded (or ungraded) attempt: a provider error or a grading error (a judge's unreadable
    reply) is recorded as the row's error, with no score."""
    graded = fb is not None and fb.error is None
    return AttemptRow(
        phase=phase, task_id=task_id, version_id=version_id, answer=attempt.answer,
        score=fb.score if fb is not None and graded else None, passed=fb.passed if fb is not None and graded else None,
        error=attempt.error or (fb.error if fb is not None else None),
        parse_error=attempt.parse_error, text=attempt.text, call_id=attempt.call_id,
    )


def evaluate_tree(
    method: Method,
    benchmark: Benchmark,
    tree: Mapping[str, str],
    tasks: Sequence[Task],
    models: Mapping[str, RoleModel],
    *,
    phase: str,
    version_id: str,
    workers: int = 1,
    scheduler: Scheduler | None = None,
    on_row: Callable[[AttemptRow], None] | None = None,
) -> list[AttemptRow]:
    """One attempt per task with `models["solver"]` (an episode agent may call the other roles); rows in task order.
    Provider errors are rows with `error`, no score. A concurrent `scheduler` runs them (the run's limit); otherwise
    `workers` threads do (the protocol's evaluation workers)."""

    solver = models["solver"]

    def one(task: Task) -> AttemptRow:
        attempt = solve(method, benchmark, tree, task.view(), solver, roles=models)
        with attributed(solver.scope):  # a judge's calls belong to this cell and unit
            fb = None if attempt.error else benchmark.grade(task, attempt.answer)
        row = attempt_row(attempt, fb, phase=phase, task_id=task.id, version_id=version_id)
        if on_row is not None:
            on_row(row)
        return row

    if scheduler is not None and scheduler.concurrent:
        return scheduler.map(one, tasks)
    if workers <= 1:
        return [one(t) for t in tasks]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, tasks))


def mean_score(rows: Sequence[AttemptRow]) -> float:
    scored = [r.score for r in rows if r.score is not None]
    return sum(scored) / len(scored) if scored else 0.0


class Evaluator:
    """The only holder of the test split. The runner calls it once per cell, on the selected version."""

    def __init__(self, locked: LockedTestSplit, benchmark: Benchmark) -> None:
        self._tasks = locked.release_to_evaluator()
        self._benchmark = benchmark
        self.test_hash = locked.hash

    def grade_ids(
        self, method: Method, tree: Mapping[str, str], models: Mapping[str, RoleModel], ids: Sequence[str], *,
        version_id: str,
        workers: int, scheduler: Scheduler | None = None, on_row: Callable[[AttemptRow], None] | None = None,
    ) -> list[AttemptRow]:
        """Grade named test tasks (a curriculum grades one stage's test at a time); unknown ids are refused."""
        by_id = {t.id: t for t in self._tasks}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise KeyError(f"not test tasks of this run: {missing}")
        return evaluate_tree(method, self._benchmark, tree, [by_id[i] for i in ids], models, phase="test",
                             version_id=version_id, workers=workers, scheduler=scheduler, on_row=on_row)

    def state_shown(self, method: Method, tree: Mapping[str, str], task_id: str) -> str:
        """The method's state as the solver saw it on this test task: the system prompt and the method's context
        block (a playbook, a sheet, retrieved memory items), not bookkeeping such as retrieval keys."""
        task = next(t for t in self._tasks if t.id == task_id)
        return f"{tree.get('system.md', '').strip()}\n\n{method.context(tree, task.view()).strip()}".strip()

    def diagnose(self, task_id: str, answer: str | None, state: str = "") -> dict[str, Any] | None:
        """The benchmark's optional diagnostics of a graded test answer and the state that wrote it."""
        return self._benchmark.diagnose(next(t for t in self._tasks if t.id == task_id), answer, state)

    def grade_test(
        self, method: Method, tree: Mapping[str, str], models: Mapping[str, RoleModel], *, version_id: str,
        workers: int,
        scheduler: Scheduler | None = None, on_row: Callable[[AttemptRow], None] | None = None,
        phase: str = "test",
    ) -> list[AttemptRow]:
        """Grade a version on the whole test split; `phase` names its rows ("transfer": another model's grading)."""
        return evaluate_tree(
            method, self._benchmark, tree, self._tasks, models, phase=phase, version_id=version_id,
            workers=workers, scheduler=scheduler, on_row=on_row,
        )

    @property
    def size(self) -> int:
        """How many test tasks there are (what a cell's progress plans for)."""
        return len(self._tasks)
