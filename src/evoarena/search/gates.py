"""Acceptance gates on before/after scores: strict improvement (a tie is refused) and non-regression (a drop
within a tolerance is kept)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from evoarena.search.archive import mean
from evoarena.search.base import Verdict

Aggregate = Literal["sum", "mean", "max"]
"""How a gate folds a score list into one number: GEPA compares minibatch sums, EvoSkill the frontier's best."""

_FOLD: dict[str, Callable[[Sequence[float]], float]] = {"sum": sum, "mean": mean, "max": max}


@dataclass(frozen=True)
class StrictImprovement:
    """Accept iff aggregate(after) > aggregate(before) + margin."""

    aggregate: Aggregate = "sum"
    margin: float = 0.0

    def decide(self, before: Sequence[float], after: Sequence[float]) -> Verdict:
        b, a = _FOLD[self.aggregate](before), _FOLD[self.aggregate](after)
        return Verdict(a > b + self.margin, b, a)


@dataclass(frozen=True)
class NonRegression:
    """Accept iff aggregate(after) >= aggregate(before) - tolerance - slack (`slack`: float noise, e.g. 1e-9)."""

    aggregate: Aggregate = "sum"
    tolerance: float = 0.0
    slack: float = 0.0

    def decide(self, before: Sequence[float], after: Sequence[float]) -> Verdict:
        b, a = _FOLD[self.aggregate](before), _FOLD[self.aggregate](after)
        return Verdict(a >= b - self.tolerance - self.slack, b, a)
