"""The curriculum (CLR-Bench): ordered episodes of stages, the harness carried across an episode's stages.

Each episode is a lane starting from the method's initial version. Per stage: up to `max_attempts` practice steps of
one submitted attempt each — the method updates after every attempt — ending at the first pass; then the stage's test
task is graded once with the harness as it stands. The method sees only its own episode's stages so far as train
tasks (the current one last); there is no validation split and no checkpoint selection.

Episodes share nothing, so in a cell without budget limits each keeps a meter of its own, and with a concurrent
scheduler they run side by side; their results are the ones of the sequential run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, cast

from evoarena.api import Task
from evoarena.api.schedule import Curriculum
from evoarena.protocol.run.schedules.base import (
    CellInputs,
    CellSchedule,
    Charge,
    Lane,
    Outcome,
    Tick,
    Unit,
    UnitKind,
    Visibility,
    runs,
)
from evoarena.protocol.run.schedules.results import StepResult


class StagedParams(Protocol):
    """What the curriculum reads of its benchmark's Params (`Curriculum.needs`, checked when the class is defined)."""

    max_attempts: int


def stages(train: Sequence[Task]) -> list[list[Task]]:
    """Practice tasks grouped by episode, in the benchmark's order; each list holds an episode's stages."""
    episodes: dict[str, list[Task]] = {}
    for t in train:
        episodes.setdefault(str(t.meta["episode"]), []).append(t)
    return [sorted(ts, key=lambda t: int(t.meta["stage"])) for ts in episodes.values()]


@runs(Curriculum)
class CurriculumSchedule(CellSchedule):
    phase = "stages"
    independent = True

    def __init__(self, inputs: CellInputs) -> None:
        super().__init__(inputs)
        self.episodes = stages(inputs.practice.train)
        self.attempts = cast(StagedParams, inputs.benchmark_params).max_attempts  # checked at class definition

    def total(self) -> int:
        """A stage is two tasks: its practice (however many attempts) and its test."""
        return 2 * sum(len(e) for e in self.episodes)

    def lanes(self, initial: str) -> list[Lane]:
        return [self._episode(e, initial) for e in self.episodes]

    def first_key(self) -> str | None:
        return _attempt_key(self.episodes[0][0], 1) if self.episodes and self.episodes[0] else None

    def _episode(self, episode: Sequence[Task], initial: str) -> Lane:
        current = initial  # a fresh state per episode
        for k, task in enumerate(episode):
            seen = Visibility(train=tuple(t.view() for t in episode[: k + 1]), val=())
            for n in range(1, self.attempts + 1):
                done = yield Unit(_attempt_key(task, n), UnitKind.PRACTICE, current, (task,), step=n, visible=seen,
                                  attempt_limit=1, first_attempt=n, optional=True)
                if not isinstance(done, StepResult):  # skipped: the budget was spent
                    break
                current = done.version
                if done.passed or done.status == "budget":
                    break
            yield Tick(None)
            test_id = str(task.meta["test_id"])
            yield Unit(f"test/{test_id}", UnitKind.STAGE_TEST, current, test_ids=(test_id,), meter=Charge.OUTSIDE)
        return Outcome(current, None)


def _attempt_key(task: Task, n: int) -> str:
    return f"{task.id}/a{n}"
