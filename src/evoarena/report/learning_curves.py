"""Learning curves from a run store: per condition the running mean of the practice score over its practice steps
(episodes on an interactive benchmark), each step averaged over the condition's cells (seeds), with the val score of
each checkpoint at the step that made it; and the ledger's cumulative tokens per role in call order. Shared by
report.html and the viewer's curves page."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from markupsafe import Markup

from evoarena.store import RunStore, queries
from evoarena.store.queries import CellRow
from evoarena.store.view_curves import checkpoint_vals, first_practice_answer, practice_steps, token_buckets

from .line_chart import Series, line_svg
from .order import spec_rank


@dataclass(frozen=True)
class ConditionCurve:
    """One condition's (× model's, when a run has several) practice curve: `scores[i]` is the mean over its cells of
    step i+1's mean score (None where no cell graded that step); `val` the mean over its cells of the val score of
    the checkpoint made at each step (step 0: the initial harness)."""

    name: str
    cells: int
    scores: list[float | None]
    val: list[tuple[int, float]] = field(default_factory=list)

    @property
    def running(self) -> list[tuple[int, float]]:
        """(step, the mean of the step scores up to it): what a 0/1 score per step averages to so far."""
        out, total, n = [], 0.0, 0
        for i, s in enumerate(self.scores):
            if s is not None:
                total, n = total + s, n + 1
                out.append((i + 1, total / n))
        return out

    @property
    def series(self) -> Series:
        return Series(self.name, [(float(x), y) for x, y in self.running])  # solid; the chart's title says so

    @property
    def val_series(self) -> Series:
        return Series(f"{self.name} val", [(float(x), y) for x, y in self.val], dashed=True)

    @property
    def first(self) -> float | None:
        return next((s for s in self.scores if s is not None), None)

    @property
    def last(self) -> float | None:
        return next((s for s in reversed(self.scores) if s is not None), None)


def practice_curves(store: RunStore, order: Sequence[str] = (), cells: Sequence[CellRow] | None = None
                    ) -> list[ConditionCurve]:
    """One curve per condition (spec `order` first) — per condition and model when the run has several models.
    `cells`: the run's cells when the caller has read them."""
    cells = queries.cells(store) if cells is None else cells
    several_models = len({c.model for c in cells}) > 1
    rank = spec_rank(order)
    groups: dict[str, list[list[float | None]]] = {}
    vals: dict[str, dict[int, list[float]]] = {}
    checkpoints, all_steps = checkpoint_vals(store), practice_steps(store)
    for c in sorted(cells, key=lambda c: (rank(c.condition), c.condition, c.model, c.seed)):
        name = f"{c.condition} · {c.model}" if several_models else c.condition
        steps = all_steps.get(c.cell, [])
        groups.setdefault(name, []).append([s.mean for s in steps])
        at = {s.unit_key: i + 1 for i, s in enumerate(steps)}
        for v in checkpoints.get(c.cell, []):
            vals.setdefault(name, {}).setdefault(at.get(v.step, 0), []).append(v.mean)
    out = []
    for name, per_cell in groups.items():
        length = max((len(s) for s in per_cell), default=0)
        scores: list[float | None] = []
        for i in range(length):
            got = [s[i] for s in per_cell if i < len(s) and s[i] is not None]
            scores.append(sum(v for v in got if v is not None) / len(got) if got else None)
        val = [(step, sum(m) / len(m)) for step, m in sorted(vals.get(name, {}).items())]
        out.append(ConditionCurve(name, len(per_cell), scores, val))
    return out


def practice_svg(curves: Sequence[ConditionCurve], word: str, chart_id: str) -> Markup:
    """The practice curves as one chart: per condition its running mean (solid) and its checkpoints' val scores
    (dashed, the same colour), on an axis from the data's range within 0–1."""
    series = [s for i, c in enumerate(curves)
              for s in (replace(c.series, colour=i), replace(c.val_series, colour=i)) if s.points]
    return line_svg(series, title=f"Practice score per {word}: running mean (solid), val per checkpoint (dashed)",
                    x_label=word, y_label="mean score (axis: the data's range)", chart_id=chart_id,
                    y_bounds=(0.0, 1.0))


def step_word(store: RunStore) -> str:
    """"episode" when the run's practice units are episodes of an interactive benchmark, else "practice step"."""
    try:
        answer = json.loads(first_practice_answer(store) or "")
    except ValueError:
        return "practice step"
    return "episode" if isinstance(answer, dict) and "trace" in answer else "practice step"


def token_series(store: RunStore, buckets: int = 200) -> list[Series]:
    """Per role, its cumulative tokens (input + output) over the ledger's call ids."""
    by_role: dict[str, list[tuple[float, float]]] = {}
    totals: dict[str, int] = {}
    for b in token_buckets(store, buckets):
        totals[b.role] = totals.get(b.role, 0) + b.input_tokens + b.output_tokens
        by_role.setdefault(b.role, []).append((float(b.last_call), float(totals[b.role])))
    return [Series(role, pts) for role, pts in sorted(by_role.items())]
