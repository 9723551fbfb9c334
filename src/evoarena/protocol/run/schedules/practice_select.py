"""Practice, select, test: practise on train, grade each checkpoint on val, grade the best checkpoint on test once.

Practice steps go through train in a seeded order per epoch; a step is a checkpoint every `select_every` steps and
at the end of each epoch. Steps stop when the budget is spent; a call budget holds back from practice what grading
the initial and the final version on val costs (`reserve`). Selection grades the initial version, then the final
one, then the checkpoints between while the budget can pay for a whole val split, and keeps the best, the earliest on
a tie; with `select: last` or no val split the last version is kept ungraded. Why it kept what it kept is the cell's
`Selection` record.
"""

from __future__ import annotations

import random
from collections.abc import Generator

from evoarena.api import Task
from evoarena.api.schedule import PracticeSelectTest
from evoarena.protocol.run.schedules.base import (
    CellInputs,
    CellSchedule,
    Charge,
    Lane,
    Outcome,
    Phase,
    Tick,
    Unit,
    UnitKind,
    runs,
)
from evoarena.protocol.run.schedules.results import CheckpointResult, StepResult, UnitResult
from evoarena.protocol.splits import PracticeSplits
from evoarena.spec import ProtocolSpec
from evoarena.store.selection import Candidate, Reason, Selection, decide, ungraded


@runs(PracticeSelectTest)
class PracticeSelectTestSchedule(CellSchedule):
    phase = "practice"

    def __init__(self, inputs: CellInputs) -> None:
        super().__init__(inputs)
        self.steps = self._steps()
        val, protocol = inputs.practice.val, inputs.protocol
        self.selecting = bool(val) and protocol.select != "last"
        # the initial version and each checkpoint are graded on val
        self.planned = 1 + sum(checkpoint for _, _, checkpoint in self.steps) if self.selecting else 0

    @classmethod
    def reserve(cls, practice: PracticeSplits, protocol: ProtocolSpec) -> int:
        """Selection always grades the initial and the final version on val, one solver call per val task each."""
        return 2 * len(practice.val) if practice.val and protocol.select != "last" else 0

    def _steps(self) -> list[tuple[str, Task, bool]]:
        """(unit key, task, is checkpoint) for every practice step; order seeded per epoch."""
        steps: list[tuple[str, Task, bool]] = []
        every, cell, seed = self.inputs.protocol.select_every, self.inputs.cell, self.inputs.seed
        train = list(self.inputs.practice.train)
        for epoch in range(self.inputs.protocol.epochs):
            order = train[:]
            random.Random(f"{seed}:{cell}:order:{epoch}").shuffle(order)
            for i, task in enumerate(order):
                n = len(steps) + 1
                checkpoint = i == len(order) - 1 or (every > 0 and n % every == 0)
                steps.append((f"practice/e{epoch}/{i:04d}/{task.id}", task, checkpoint))
        return steps

    def total(self) -> int:
        return len(self.steps) + self.planned * len(self.inputs.practice.val) + self.inputs.test_size

    def phases(self) -> dict[str, int]:
        return {"practice": len(self.steps), "select": self.planned * len(self.inputs.practice.val),
                "test": self.inputs.test_size}

    def lanes(self, initial: str) -> list[Lane]:
        return [self._lane(initial)]

    def _lane(self, initial: str) -> Lane:
        current, checkpoints, steps_done = initial, [(initial, 0)], 0
        for n, (key, task, is_checkpoint) in enumerate(self.steps):
            done = yield Unit(key, UnitKind.PRACTICE, current, (task,), step=n, checkpoint=is_checkpoint,
                              optional=True)
            if not isinstance(done, StepResult):  # skipped: the budget was spent
                break
            current, steps_done = done.version, n + 1
            if done.checkpoint:
                checkpoints.append((current, steps_done))
            yield Tick(1.0 if done.passed else 0.0)
            if done.status == "budget":
                break
        checkpoints.append((current, steps_done))  # the final version is always a candidate
        made: dict[str, int] = {}
        for vid, step in checkpoints:  # each version once, at the step it was first a checkpoint
            made.setdefault(vid, step)
        candidates = [Candidate(vid, step) for vid, step in made.items()]
        if self.selecting:
            yield Phase("select", extra=max(0, len(candidates) - self.planned) * len(self.inputs.practice.val))
            selection = yield from self._select(candidates, current)
        else:
            last = next(c for c in candidates if c.version == current)
            selection = ungraded(last, Reason.SELECT_LAST if self.inputs.practice.val else Reason.NO_VAL)
        yield Phase("test")
        yield Unit(f"test/{selection.selected}", UnitKind.TEST, selection.selected, meter=Charge.OUTSIDE)
        return Outcome(current, selection.selected, selection)

    def _select(self, candidates: list[Candidate], final: str) -> Generator[Unit, UnitResult | None, Selection]:
        """Grade the initial version, then the final one, then the checkpoints between while the budget can pay for
        a whole val split; the best mean wins, the earliest on a tie."""
        val = tuple(self.inputs.practice.val)
        order = sorted(candidates, key=lambda c: (c.version != candidates[0].version, c.version != final))
        graded: dict[str, Candidate] = {}
        for c in order:
            done = yield Unit(f"select/{c.version}", UnitKind.CHECKPOINT, c.version, val, meter=Charge.SELECTION,
                              optional=bool(graded))
            mean = float(done.mean) if isinstance(done, CheckpointResult) else None
            graded[c.version] = Candidate(c.version, c.step, mean, skipped=mean is None)
        return decide(tuple(graded[c.version] for c in candidates), final, len(val))
