"""Acceptance gates (search.gates): strict improvement refuses ties; non-regression keeps drops within tolerance."""

from __future__ import annotations

import pytest

from evoarena.search import NonRegression, StrictImprovement, Verdict


def test_strict_improvement_on_minibatch_sums_refuses_ties() -> None:
    gate = StrictImprovement()
    assert gate.decide([0, 1, 0], [1, 1, 0]) == Verdict(True, 1, 2)
    assert not gate.decide([0, 1, 0], [1, 0, 0]).accepted  # same sum, different instances: a tie
    assert not gate.decide([1, 1], [1, 0]).accepted


def test_strict_improvement_with_a_margin() -> None:
    assert not StrictImprovement(margin=0.1).decide([0.5], [0.6]).accepted
    assert StrictImprovement(margin=0.1).decide([0.5], [0.61]).accepted


def test_strict_improvement_over_the_frontier_best() -> None:
    gate = StrictImprovement("max")
    assert gate.decide([0.2, 0.6, 0.4], [0.7]) == Verdict(True, 0.6, 0.7)
    assert not gate.decide([0.2, 0.6, 0.4], [0.6]).accepted
    assert not gate.decide([0.2, 0.6, 0.4], [0.5]).accepted  # kept in the frontier maybe, but no improvement


def test_mean_aggregate_compares_averages() -> None:
    assert StrictImprovement("mean").decide([1, 0], [1, 0, 1]).accepted
    assert not StrictImprovement("sum").decide([1, 1], [1, 0, 0]).accepted


@pytest.mark.parametrize(("after", "ok"), [(0.5, True), (0.6, True), (0.45, True), (0.44, False)])
def test_non_regression_keeps_drops_within_the_tolerance(after: float, ok: bool) -> None:
    assert NonRegression(tolerance=0.05, slack=1e-9).decide([0.5], [after]).accepted is ok


def test_non_regression_without_tolerance_refuses_any_drop_beyond_the_slack() -> None:
    gate = NonRegression(slack=1e-9)
    assert gate.decide([0.5], [0.5 - 1e-10]).accepted
    assert not gate.decide([0.5], [0.49]).accepted
    assert NonRegression().decide([1, 0], [0, 1]).accepted  # a tie passes
