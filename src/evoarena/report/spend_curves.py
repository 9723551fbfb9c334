"""Score-vs-spend: per condition, the score of the checkpoint selection would have kept had the budget ended at each
point — select among the checkpoints graded on val whose practice spend is within it (best val mean, a tie keeps the
earliest, as selection does), then read its score. The run grades only the selected version on test, so the score is
that checkpoint's val score (the value selection saw, optimistic for a best-of-several choice) — unless `evoarena
curve` graded every checkpoint on test, when it is the test score."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .results import BOOTSTRAP_SEED, CI_LEVEL, N_RESAMPLES
from .results_record import CurvePoint, SpendCurve, SpendCurves
from .stats import bootstrap_ci, clean, mean

AXES = ("calls", "tokens", "usd")
SPEND = "spend: practice calls, tokens and dollars up to that checkpoint, cached calls included"
NOTES = {
    "val": "val score of the checkpoint val selects within each spend: the run grades only the selected version on "
           f"test (`evoarena curve RUN` grades the others); {SPEND}",
    "test": f"test score of the checkpoint val selects within each spend (`evoarena curve` graded each); {SPEND}",
}


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint selection graded on val: its practice step, the spend up to it per axis, its val mean and its
    val (and test, where graded) scores by task."""

    step: int
    spend: Mapping[str, float]
    val: float
    by_task: Mapping[str, float]
    test_by_task: Mapping[str, float] | None = None  # graded on test: the selected version, or by `evoarena curve`


@dataclass(frozen=True)
class CellCheckpoints:
    condition: str
    model: str
    seed: int
    checkpoints: Sequence[Checkpoint]


def spend_curves(cells: Sequence[CellCheckpoints]) -> SpendCurves:
    """The curves of every condition × model on each axis that was spent on (no usd axis for free models); on test
    when every checkpoint has test scores, else on val."""
    on_test = all(k.test_by_task for c in cells for k in c.checkpoints)
    split = "test" if on_test and any(c.checkpoints for c in cells) else "val"
    groups: dict[tuple[str, str], list[CellCheckpoints]] = defaultdict(list)
    for c in cells:
        if c.checkpoints:
            groups[(c.condition, c.model)].append(c)
    curves = []
    for (condition, model), group in sorted(groups.items()):
        for axis in AXES:
            xs = sorted({k.spend[axis] for c in group for k in c.checkpoints})
            if axis == "usd" and xs == [0.0]:
                continue
            curves.append(SpendCurve(condition=condition, model=model, axis=axis,
                                     points=[_point(group, axis, x, split) for x in xs]))
    return SpendCurves(split=split, note=NOTES[split], curves=curves)


def kept_by(checkpoints: Sequence[Checkpoint], axis: str, budget: float) -> Checkpoint | None:
    """The checkpoint selection keeps among those spent within `budget`: the best val mean, the earliest on a tie."""
    within = [k for k in checkpoints if k.spend[axis] <= budget]
    return max(within, key=lambda k: (k.val, -k.step)) if within else None


def _point(group: Sequence[CellCheckpoints], axis: str, x: float, split: str) -> CurvePoint:
    """The point at spend `x`; its bootstrap is seeded from the condition and model alone, so the same scores give
    the same interval at every spend and on every axis."""
    by_task: dict[str, list[float]] = defaultdict(list)
    seeds = 0
    for c in group:
        kept = kept_by(c.checkpoints, axis, x)
        if kept is None:
            continue
        seeds += 1
        for task, score in ((kept.test_by_task or {}) if split == "test" else kept.by_task).items():
            by_task[task].append(score)
    means = [mean(v) for _, v in sorted(by_task.items())]
    m, low, high = bootstrap_ci(means, seed=BOOTSTRAP_SEED, n_resamples=N_RESAMPLES,
                                level=CI_LEVEL)
    return CurvePoint(spend=clean(x), mean=clean(m), ci_low=clean(low), ci_high=clean(high), n_seeds=seeds)
