"""Headroom from the versus-baseline rows: the reference's paired difference, its caveat when the CI spans 0, and
each other condition's share (none of a headroom that is not positive)."""

from __future__ import annotations

from typing import Any

import pytest

from evoarena.report.headroom import CANNOT_SHOW, headroom


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
