"""When the refiner runs: the released schedule (sethkarten/pokeagent-speedrun, branch feature/generalized-harness,
`agents/utils/harness_evolver.py`: `should_evolve`) — never before step 10, every 10 steps up to step 200, every 25
after — or a fixed period F (`every`) after the same warm-up, as the README's `--optimization-frequency` demo runs."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cadence:
    """The schedule's numbers: `warmup` (no refinement before it), `early_every` up to and including `early_until`,
    `late_every` after; `every` (F > 0) replaces both periods."""

    warmup: int = 10
    early_every: int = 10
    early_until: int = 200
    late_every: int = 25
    every: int | None = None

    def __post_init__(self) -> None:
        if self.warmup < 1 or self.early_every < 1 or self.late_every < 1 or self.early_until < 0:
            raise ValueError("cadence: warmup, early_every and late_every must be >= 1, early_until >= 0")
        if self.every is not None and self.every < 1:
            raise ValueError(f"cadence: every (F) must be >= 1, got {self.every}")

    def period(self, step: int) -> int:
        if self.every:
            return self.every
        return self.early_every if step <= self.early_until else self.late_every


def refines_at(step: int, cadence: Cadence = Cadence()) -> bool:
    """Whether the refiner runs once `step` steps have been taken (as released: `step >= warmup` and `step` a
    multiple of the period in force at `step`)."""
    if step <= 0 or step < cadence.warmup:
        return False
    return step % cadence.period(step) == 0


def schedule(until: int, cadence: Cadence = Cadence()) -> list[int]:
    """Every step up to `until` at which the refiner runs (for docs, reports and tests)."""
    return [s for s in range(1, until + 1) if refines_at(s, cadence)]
