"""Each condition's test score and its paired difference to the baseline, as results.json holds them (RunResults's
`conditions` and `versus_baseline`), in spec order: the scores the runs list and a run's overview show."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from evoarena.report.order import spec_rank
from evoarena.report.results_record import BudgetResult, ConditionCalls, ConditionResult, RunResults, Versus

Row = TypeVar("Row", ConditionResult, ConditionCalls, BudgetResult)


def ordered(rows: Sequence[Row], order: list[str]) -> list[Row]:
    """Rows by the spec's condition order (the baseline first), then by condition and model."""
    rank = spec_rank(order)
    return sorted(rows, key=lambda r: (rank(str(r.condition)), str(r.condition), str(getattr(r, "model", None))))


@dataclass(frozen=True)
class ScoreLine:
    """One condition × model: its test score (with CI) and its difference to the baseline (None for the baseline
    itself or when nothing is paired)."""

    result: ConditionResult
    versus: Versus | None

    @property
    def is_baseline(self) -> bool:
        return self.versus is not None and self.versus.condition == self.versus.baseline


def score_lines(results: RunResults | None, order: list[str]) -> list[ScoreLine]:
    """The run's conditions with their test scores and differences, baseline first; [] before any cell is done."""
    if results is None:
        return []
    versus = {(v.condition, v.model): v for v in results.versus_baseline}
    return [ScoreLine(c, versus.get((c.condition, c.model))) for c in ordered(results.conditions, order)]
