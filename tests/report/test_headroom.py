"""Headroom from the versus-baseline rows: the reference's paired difference, its caveat when the CI spans 0, and
each other condition's share (none of a headroom that is not positive)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from evoarena.report.headroom import CANNOT_SHOW, share_ci
from evoarena.report.headroom import headroom as headroom_of


def headroom(rows: list[dict[str, Any]], references: list[str],
             means: dict[tuple[str, str], dict[str, float]] | None = None) -> list[dict[str, Any]] | None:
    return headroom_of(rows, references, means or {}, seed=0, n_resamples=2000, level=0.95)


def _row(condition: str, diff: float | None, low: float | None, high: float | None, model: str = "m") -> dict[str, Any]:
    return {"condition": condition, "model": model, "baseline": "frozen", "n_paired": 40, "diff": diff,
            "ci_low": low, "ci_high": high, "mde": 0.2}


def test_shares_of_a_headroom_the_split_detects() -> None:
    rows = [_row("frozen", 0.0, 0.0, 0.0), _row("ref", 0.2, 0.05, 0.35), _row("ace", 0.05, -0.1, 0.2),
            _row("gepa", -0.1, -0.2, 0.0)]
    (h,) = headroom(rows, ["ref"]) or []
    assert (h["control"], h["diff"], h["detectable"], h["note"]) == ("ref", 0.2, True, None)
    assert [(s["condition"], s["share"]) for s in h["shares"]] == [("ace", pytest.approx(0.25)),
                                                                   ("gepa", pytest.approx(-0.5))]


@pytest.mark.parametrize(("diff", "low", "high"), [(0.1, -0.05, 0.25), (0.0, 0.0, 0.0), (-0.1, -0.3, 0.05)])
def test_a_headroom_whose_ci_spans_zero_says_so(diff: float, low: float, high: float) -> None:
    (h,) = headroom([_row("frozen", 0.0, 0.0, 0.0), _row("ref", diff, low, high), _row("ace", 0.1, 0, 0.2)],
                    ["ref"]) or []
    assert not h["detectable"] and h["note"] == CANNOT_SHOW
    assert h["shares"][0]["share"] is (None if diff <= 0 else h["shares"][0]["share"])


def test_no_reference_no_headroom_and_one_per_model() -> None:
    rows = [_row("frozen", 0.0, 0.0, 0.0), _row("ref", 0.2, 0.1, 0.3), _row("frozen", 0.0, 0.0, 0.0, "n"),
            _row("ref", 0.4, 0.3, 0.5, "n")]
    assert headroom(rows, []) is None and headroom(rows[:1], ["frozen"]) is None
    assert [(h["model"], h["diff"]) for h in headroom(rows, ["ref"]) or []] == [("m", 0.2), ("n", 0.4)]


def _tasks(values: Any) -> dict[str, float]:
    return {f"t{i:03d}": float(v) for i, v in enumerate(values)}  # sorted by name = in order


def test_the_share_ci_is_the_bootstrap_of_the_ratio_of_mean_differences() -> None:
    rng = np.random.default_rng(1)
    base = (rng.random(30) < 0.2).astype(float)
    ref = np.maximum(base, rng.random(30) < 0.8)
    method = np.where(rng.random(30) < 0.5, ref, base)
    low, high = share_ci(_tasks(method), _tasks(ref), _tasks(base), seed=3, n_resamples=500, level=0.9)
    picks = np.random.default_rng(3).integers(0, 30, (500, 30))  # the same resamples, by hand
    gain, room = (method - base)[picks].mean(axis=1), (ref - base)[picks].mean(axis=1)
    assert (room > 0).all()
    want = np.quantile(gain / room, [0.05, 0.95])  # numpy's default is the type-7 quantile
    assert (low, high) == (pytest.approx(want[0]), pytest.approx(want[1]))


def test_a_share_of_a_headroom_resamples_can_lose_is_unbounded() -> None:
    base = np.zeros(20)
    ref = np.array([1.0, -1.0] * 10)
    ref[0] = 2.0  # mean headroom 0.05: a third of the resamples have none
    method = np.array([0.5] * 20)
    assert share_ci(_tasks(method), _tasks(ref), _tasks(base), seed=0, n_resamples=1000, level=0.95)[1] is None
    assert share_ci({"a": 1.0}, {"a": 1.0}, {"a": 0.0}, seed=0, n_resamples=100, level=0.95) == (None, None)


def test_the_share_ci_covers_the_true_share_about_as_often_as_it_says() -> None:
    rng = np.random.default_rng(7)
    covered = 0
    reps = 150
    for _ in range(reps):  # headroom 0.4, the method finds half of it: true share 0.5
        base = (rng.random(60) < 0.3).astype(float)
        ref = np.maximum(base, rng.random(60) < 0.4 / 0.7 * 1.0)
        method = np.where(rng.random(60) < 0.5, ref, base)
        low, high = share_ci(_tasks(method), _tasks(ref), _tasks(base), seed=0, n_resamples=1000, level=0.95)
        covered += low is not None and high is not None and low <= 0.5 <= high
    assert 0.88 <= covered / reps <= 0.995


def test_shares_carry_their_ci_in_the_headroom() -> None:
    rows = [_row("frozen", 0.0, 0.0, 0.0), _row("ref", 0.5, 0.2, 0.8), _row("ace", 0.25, 0.0, 0.5)]
    means = {("frozen", "m"): _tasks([0] * 10), ("ref", "m"): _tasks([1] * 8 + [0] * 2),
             ("ace", "m"): _tasks([1] * 4 + [0] * 6)}
    (h,) = headroom(rows, ["ref"], means) or []
    (s,) = h["shares"]
    assert s["share"] == pytest.approx(0.5) and s["share_ci_low"] is not None and s["share_ci_high"] is not None
    assert s["share_ci_low"] <= 0.5 <= s["share_ci_high"]
