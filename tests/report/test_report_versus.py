"""Each condition against the spec's first, per model: the paired per-task difference and its CI."""

from __future__ import annotations

import pytest

from evoarena.report import ScoreRecord
from evoarena.report.versus import versus_baseline


def _rec(condition: str, task: str, score: float, *, model: str = "m", seed: int = 0,
         error: bool = False) -> ScoreRecord:
    return ScoreRecord(condition, model, seed, "test", task, score, error=error)


def test_paired_difference_in_spec_order_against_the_first() -> None:
    scores = [_rec("frozen", f"t{i}", float(i % 2)) for i in range(10)]  # 0.5
    scores += [_rec("evolved", f"t{i}", 1.0) for i in range(10)]  # 1.0 everywhere
    scores += [_rec("evolved", "t0", 0.0, seed=1)]  # a second seed: t0 averages to 0.5
    scores += [_rec("broken", f"t{i}", 0.0, error=i < 4) for i in range(10)]  # 6 graded: pairs only with those
    rows = versus_baseline(scores, ["frozen", "evolved", "broken"], n_resamples=500, level=0.95, seed=0)
    assert [r["condition"] for r in rows] == ["frozen", "evolved", "broken"]
    base, evolved, broken = rows
    assert (base["diff"], base["ci_low"], base["ci_high"], base["baseline"]) == (0.0, 0.0, 0.0, "frozen")
    assert evolved["diff"] == pytest.approx((4 * 1.0 + 0.5) / 10) and evolved["n_paired"] == 10  # even tasks gain
    assert evolved["ci_low"] < evolved["diff"] < evolved["ci_high"] <= 1.0
    assert broken["n_paired"] == 6 and broken["diff"] == pytest.approx(-3 / 6)


def test_each_model_has_its_own_baseline_and_unknown_conditions_come_last() -> None:
    scores = [_rec("b", "t", 1.0, model="x"), _rec("a", "t", 0.0, model="x"), _rec("a", "t", 0.5, model="y"),
              _rec("zz", "t", 1.0, model="y")]
    rows = versus_baseline(scores, ["b", "a"], n_resamples=100, level=0.95, seed=0)
    assert [(r["condition"], r["model"], r["baseline"], r["diff"]) for r in rows] == [
        ("b", "x", "b", 0.0), ("a", "x", "b", -1.0), ("a", "y", "a", 0.0), ("zz", "y", "a", 0.5)]


def test_each_comparison_carries_the_mde_of_its_paired_tasks() -> None:
    """From the baseline's per-task spread on the tasks both graded; the baseline's own row has none, and a results.json
    written before the field existed still reads."""
    from evoarena.report.power import mde, score_variance
    from evoarena.report.results_record import Versus

    scores = [_rec("frozen", f"t{i}", float(i % 4 == 0)) for i in range(12)]
    scores += [_rec("evolved", f"t{i}", 1.0, error=i >= 8) for i in range(12)]
    base, evolved = versus_baseline(scores, ["frozen", "evolved"], n_resamples=100, level=0.95, seed=0)
    assert base["mde"] is None
    assert evolved["mde"] == pytest.approx(mde(8, score_variance([float(i % 4 == 0) for i in range(8)])))
    assert 0 < evolved["mde"] < 1
    old = {k: v for k, v in evolved.items() if k != "mde"}
    assert Versus.model_validate(old).model_dump() == old
