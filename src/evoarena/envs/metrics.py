"""Learning-curve metrics over repeated episodes (EvoTest, JitRL): the seeds' AUC — Σ over episodes of the final
cumulative score / (K × max score), a normalised mean score over the run, not a ROC area — the late-segment mean, and
success per family."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def auc(final_scores: Sequence[float], max_score: float) -> float:
    """Σ final scores / (K × max_score) over K episodes (0.0 for none)."""
    if max_score <= 0:
        raise ValueError(f"auc: max_score must be > 0, got {max_score}")
    return sum(final_scores) / (len(final_scores) * max_score) if final_scores else 0.0


def late_mean(final_scores: Sequence[float], fraction: float = 0.3) -> float:
    """The mean of the last `fraction` of the episodes (at least one): whether learning held at the end."""
    if not final_scores:
        return 0.0
    k = max(1, round(len(final_scores) * fraction))
    tail = final_scores[-k:]
    return sum(tail) / len(tail)


def success_by_family(outcomes: Sequence[tuple[str, bool]]) -> Mapping[str, float]:
    """{family: share of its episodes won}."""
    tally: dict[str, list[int]] = {}
    for family, won in outcomes:
        t = tally.setdefault(family, [0, 0])
        t[0] += won
        t[1] += 1
    return {f: w / n for f, (w, n) in sorted(tally.items())}
