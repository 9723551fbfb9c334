"""Headroom: what the benchmark lets a harness gain over the baseline, measured by a reference harness (the best
known one, installed unchanged) — its paired difference to the baseline with its CI — and each other condition's
gain as a share of it. A finding either way: methods that found none of a headroom the split detects, or a benchmark
that cannot show a gain at all."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .stats import quantile7, quantile7_at

CANNOT_SHOW = "the benchmark cannot show a gain here: the headroom's CI spans 0"


def headroom(versus: Sequence[Mapping[str, Any]], references: Sequence[str],
             means: Mapping[tuple[str, str], Mapping[str, float]], *, seed: int, n_resamples: int,
             level: float) -> list[dict[str, Any]] | None:
    """Per model, the first reference condition against the baseline (`versus`: results.json's versus_baseline rows)
    and each other non-baseline condition's difference as a share of it (None unless the headroom is positive), with
    the share's bootstrap CI (`means`: per (condition, model) the per-task test means). None when the run has no
    reference condition compared with a baseline."""
    rows = [v for v in versus if v["condition"] in references and v["condition"] != v["baseline"]]
    out = []
    for model in dict.fromkeys(v["model"] for v in rows):
        ref = next(v for v in rows if v["model"] == model)
        diff, low, high = ref["diff"], ref["ci_low"], ref["ci_high"]
        detectable = low is not None and high is not None and (low > 0 or high < 0)
        shares = []
        for v in versus:
            if v["model"] != model or v["condition"] in (ref["condition"], v["baseline"]):
                continue
            share = _share(v["diff"], diff)
            low_high = (None, None) if share is None else share_ci(
                means.get((v["condition"], model), {}), means.get((ref["condition"], model), {}),
                means.get((ref["baseline"], model), {}), seed=seed, n_resamples=n_resamples, level=level)
            shares.append({"condition": v["condition"], "diff": v["diff"], "share": share,
                           "share_ci_low": low_high[0], "share_ci_high": low_high[1]})
        out.append({"model": model, "baseline": ref["baseline"], "control": ref["condition"],
                    "n_paired": ref["n_paired"], "diff": diff, "ci_low": low, "ci_high": high, "mde": ref["mde"],
                    "detectable": detectable, "note": None if detectable else CANNOT_SHOW, "shares": shares})
    return out or None


def _share(gain: float | None, room: float | None) -> float | None:
    if gain is None or room is None or room <= 0:
        return None
    return gain / room


def share_ci(method: Mapping[str, float], reference: Mapping[str, float], baseline: Mapping[str, float], *,
             seed: int, n_resamples: int, level: float) -> tuple[float | None, float | None]:
    """Percentile bootstrap CI of (method − baseline) / (reference − baseline), the ratio of mean paired differences,
    the tasks graded in all three resampled jointly. A resample whose headroom is not positive has no share: it
    counts as +inf (or −inf when the method's difference is negative), so a side the CI cannot bound is None."""
    tasks = sorted(set(method) & set(reference) & set(baseline))
    if len(tasks) < 2:
        return None, None
    gain = np.array([method[t] - baseline[t] for t in tasks])
    room = np.array([reference[t] - baseline[t] for t in tasks])
    picks = np.random.default_rng(seed).integers(0, len(tasks), (n_resamples, len(tasks)))
    num, den = gain[picks].mean(axis=1), room[picks].mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.where(num < 0, -np.inf, np.inf))
    ordered = np.sort(ratio)
    alpha = (1.0 - level) / 2
    bounds: list[float | None] = []
    for p in (alpha, 1.0 - alpha):
        lo, hi = quantile7_at(ordered.size, p)  # the order statistics the quantile interpolates between
        bounds.append(quantile7(ordered, p) if np.isfinite(ordered[lo]) and np.isfinite(ordered[hi]) else None)
    return bounds[0], bounds[1]
