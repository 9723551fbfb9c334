"""How the protocol runs a benchmark's cells, as the benchmark names it: `schedule = Curriculum` on its class.

These are names only; the protocol (a floor above) maps each to the schedule that yields the cell's units, so a
benchmark states the shape of its run without importing the code that runs it.
"""

from __future__ import annotations

from typing import ClassVar


class Schedule:
    """A way of running a cell; subclassed once per schedule the protocol implements."""

    name: ClassVar[str]
    """What reports call it (results.json's `benchmark.protocol`)."""
    needs: ClassVar[tuple[str, ...]] = ()
    """The fields a benchmark's `Params` must declare to run on this schedule."""


class PracticeSelectTest(Schedule):
    """Practise on train, select a checkpoint on val, grade the selected version on test once."""

    name = "practice-select-test"


class Curriculum(Schedule):
    """Ordered episodes of stages: practice attempts on a stage until it passes, then the stage's test, with the
    harness carried to the episode's next stage. A benchmark on it declares `max_attempts` (practice attempts per
    stage) in its `Params`."""

    name = "curriculum"
    needs: ClassVar[tuple[str, ...]] = ("max_attempts",)


SCHEDULES: tuple[type[Schedule], ...] = (PracticeSelectTest, Curriculum)


def schedule_named(name: str) -> type[Schedule]:
    """The schedule a benchmark written for the older `protocol = "<name>"` attribute meant."""
    for schedule in SCHEDULES:
        if schedule.name == name:
            return schedule
    known = ", ".join(s.name for s in SCHEDULES)
    raise TypeError(f"unknown protocol {name!r} (known: {known}); name a schedule class instead, e.g. "
                    "`schedule = Curriculum` (from evoarena.api)")
