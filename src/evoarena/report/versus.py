"""Each condition against the baseline — the spec's first condition — on the test split: the paired per-task
difference in score (each task averaged over seeds first, only tasks both graded), with a bootstrap CI and the
minimum difference those tasks could detect (report/power.py, from the baseline's per-task spread)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from .order import spec_rank
from .power import mde, score_variance
from .records import ScoreRecord
from .stats import bootstrap_ci, mean


def task_means(scores: Sequence[ScoreRecord]) -> dict[tuple[str, str], dict[str, float]]:
    """Per (condition, model), each graded test task's score averaged over seeds."""
    by_cell: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in scores:
        if r.split == "test" and not r.error:
            by_cell[(r.condition, r.model)][r.task_id].append(r.score)
    return {cell: {t: mean(v) for t, v in tasks.items()} for cell, tasks in by_cell.items()}


def versus_baseline(scores: Sequence[ScoreRecord], order: Sequence[str], *, n_resamples: int, level: float,
                    seed: int) -> list[dict[str, Any]]:
    """One row per (condition, model) in `order` (the spec's conditions; others after, by name), each compared with
    the first condition of `order` graded by the same model."""
    by_cell = task_means(scores)
    rank = spec_rank(order)
    cells = sorted(by_cell, key=lambda cm: (rank(cm[0]), cm[0], cm[1]))
    baseline_of: dict[str, str] = {}
    for condition, model in cells:
        baseline_of.setdefault(model, condition)
    out = []
    for condition, model in cells:
        base = baseline_of[model]
        mine, theirs = by_cell[(condition, model)], by_cell[(base, model)]
        shared = sorted(set(mine) & set(theirs))
        diffs = [mine[t] - theirs[t] for t in shared]
        m, low, high = bootstrap_ci(diffs, seed=seed,
                                    n_resamples=n_resamples, level=level)
        detectable = None
        if condition != base and shared:
            detectable = mde(len(shared), score_variance([theirs[t] for t in shared]))
        out.append({"condition": condition, "model": model, "baseline": base, "n_paired": len(shared),
                    "mean": mean(list(mine.values())), "diff": m, "ci_low": low, "ci_high": high,
                    "mde": detectable})
    return out
