"""Practice, select, test: practise on train, grade each checkpoint on val, grade the best checkpoint on test once.

Practice steps go through train in a seeded order per epoch; a step is a checkpoint every `select_every` steps and
at the end of each epoch. Steps stop when the budget is spent. Selection grades the initial version and every
checkpoint on val (it spends from the budget but finishes the checkpoint it started) and keeps the best, the earliest
on a tie; with `select: last` or no val split the last version is kept ungraded.
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

    def lanes(self, initial: str) -> list[Lane]:
        return [self._lane(initial)]

    def _lane(self, initial: str) -> Lane:
        current, checkpoints = initial, [initial]
        for n, (key, task, is_checkpoint) in enumerate(self.steps):
            done = yield Unit(key, UnitKind.PRACTICE, current, (task,), step=n, checkpoint=is_checkpoint,
                              optional=True)
            if not isinstance(done, StepResult):  # skipped: the budget was spent
                break
            current = done.version
            if done.checkpoint:
                checkpoints.append(current)
            yield Tick(1.0 if done.passed else 0.0)
            if done.status == "budget":
                break
        if checkpoints[-1] != current:
            checkpoints.append(current)
        candidates = list(dict.fromkeys(checkpoints))
        if self.selecting:
            yield Phase("select", extra=max(0, len(candidates) - self.planned) * len(self.inputs.practice.val))
            selected = yield from self._select(candidates)
        else:
            selected = candidates[-1]
        yield Phase("test")
        yield Unit(f"test/{selected}", UnitKind.TEST, selected, meter=Charge.OUTSIDE)
        return Outcome(current, selected)

    def _select(self, candidates: list[str]) -> Generator[Unit, UnitResult | None, str]:
        """Grade the candidates on val until the budget is spent (the first is always graded); the best wins."""
        scores: dict[str, float] = {}
        val = tuple(self.inputs.practice.val)
        for vid in candidates:
            done = yield Unit(f"select/{vid}", UnitKind.CHECKPOINT, vid, val, meter=Charge.SELECTION,
                              optional=bool(scores))
            if not isinstance(done, CheckpointResult):
                break
            scores[vid] = float(done.mean)
        best = max(scores.values())
        return next(v for v in candidates if v in scores and scores[v] == best)  # ties: the earliest
