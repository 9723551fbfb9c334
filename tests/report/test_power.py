"""The MDE arithmetic (report/power.py) against a seeded simulation of paired Bernoulli tasks, against scipy's exact
noncentral-t power of a paired t-test, and the val tie-break against scipy's multinomial."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from scipy import stats

from evoarena.report import bootstrap_ci
from evoarena.report.power import edge, mde, mde_from_sd, power_at, score_variance, tie_break, z_sum


def _pairs(rng: np.random.Generator, n: int, psi: float, delta: float, reps: int) -> np.ndarray:
    """`reps` experiments of n paired pass/fail tasks: D = +1 w.p. (ψ + δ)/2, −1 w.p. (ψ − δ)/2, else 0."""
    u = rng.random((reps, n))
    up, down = (psi + delta) / 2, (psi - delta) / 2
    return np.where(u < up, 1.0, np.where(u < up + down, -1.0, 0.0))


@pytest.mark.parametrize(("n", "psi"), [(40, 0.25), (60, 0.2), (150, 0.1)])
def test_power_at_the_mde_is_80_percent_in_a_simulation(n: int, psi: float) -> None:
    """The test results.json makes in its large-sample form: mean(D) over its standard error beyond z_{0.975}."""
    delta = mde(n, psi)
    assert delta is not None and 0 < delta < math.sqrt(psi)
    d = _pairs(np.random.default_rng(n), n, psi, delta, 20_000)
    se = d.std(axis=1, ddof=1) / math.sqrt(n)
    found = np.abs(d.mean(axis=1)) > 1.959964 * np.where(se > 0, se, np.inf)
    assert found.mean() == pytest.approx(0.8, abs=0.03)
    half = _pairs(np.random.default_rng(n + 1), n, psi, delta / 2, 20_000)  # half the MDE is found far less often
    se = half.std(axis=1, ddof=1) / math.sqrt(n)
    assert (np.abs(half.mean(axis=1)) > 1.959964 * np.where(se > 0, se, np.inf)).mean() < 0.4


def test_the_reports_own_bootstrap_ci_leaves_zero_about_80_percent_of_the_time_at_the_mde() -> None:
    n, psi = 40, 0.25
    delta = mde(n, psi)
    assert delta is not None
    d = _pairs(np.random.default_rng(7), n, psi, delta, 400)
    excluded = [lo > 0 or hi < 0 for _, lo, hi in (bootstrap_ci(row.tolist(), seed=i) for i, row in enumerate(d))]
    assert float(np.mean(excluded)) == pytest.approx(0.8, abs=0.06)


@pytest.mark.parametrize("n", [30, 60, 200])
def test_mde_from_sd_matches_scipys_paired_t_power(n: int) -> None:
    """At the MDE a paired t-test (scipy: noncentral t, n − 1 df) has power 0.8 but for the t's heavier tails: the
    MDE is the normal form, as the percentile bootstrap of results.json behaves, a shortfall under 0.9/n."""
    sd = 0.37
    delta = mde_from_sd(n, sd)
    assert delta is not None
    df, nc = n - 1, math.sqrt(n) * delta / sd
    crit = stats.t.ppf(0.975, df)
    exact = stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc)
    assert 0 < 0.8 - exact < 0.9 / n
    assert power_at(delta, n, sd**2 + delta**2) == pytest.approx(0.8, abs=1e-3)


def test_the_two_forms_agree_and_move_the_right_way() -> None:
    psi = 0.21
    delta = mde(50, psi)
    assert delta is not None
    assert mde_from_sd(50, math.sqrt(psi - delta**2)) == pytest.approx(delta)
    assert z_sum() == pytest.approx(stats.norm.ppf(0.975) + stats.norm.ppf(0.8))
    assert mde(200, psi) < delta < mde(20, psi)  # more tasks, smaller
    assert mde(50, psi, power=0.9) > delta > mde(50, psi, alpha=0.2)  # more power or less alpha, larger
    assert mde(50, 0.05) < delta  # agreeing conditions are easier to tell apart
    assert mde(0, psi) is None
    with pytest.raises(ValueError, match="alpha"):
        mde(50, psi, alpha=1.0)
    with pytest.raises(ValueError, match="discordance"):
        mde(50, 1.5)


def test_score_variance_of_partial_credit_and_of_a_pilot_at_the_edge() -> None:
    fractions = [0.0, 0.25, 0.5, 1.0, 0.75, 0.5, 0.25]
    assert score_variance(fractions) == pytest.approx(statistics.variance(fractions))
    at_ceiling = score_variance([1.0] * 10)  # shrunk: p = 11/12, so not a spread of 0
    assert at_ceiling == pytest.approx((11 / 12) * (1 / 12))
    assert score_variance([0.0] * 10) == pytest.approx(at_ceiling)
    assert edge(0.97, 0.1) == "ceiling" and edge(0.05, 0.1) == "floor" and edge(0.5, 0.1) is None


@pytest.mark.parametrize(("n_val", "delta", "psi"), [(6, 0.2, 0.25), (20, 0.1, 0.2), (8, 0.3, 0.3)])
def test_tie_break_matches_scipys_multinomial_and_a_simulation(n_val: int, delta: float, psi: float) -> None:
    tb = tie_break(n_val, delta, psi)
    probs = [(psi + delta) / 2, (psi - delta) / 2, 1 - psi]
    dist = stats.multinomial(n_val, probs)
    tie = sum(dist.pmf([k, k, n_val - 2 * k]) for k in range(n_val // 2 + 1))
    better = sum(dist.pmf([a, b, n_val - a - b]) for a in range(n_val + 1) for b in range(n_val + 1 - a) if a > b)
    assert tb.tie == pytest.approx(tie, abs=1e-12)
    assert tb.better_wins == pytest.approx(better, abs=1e-12)
    assert tb.resolution == pytest.approx(1 / n_val)
    d = _pairs(np.random.default_rng(n_val), n_val, psi, delta, 20_000).sum(axis=1)
    assert float(np.mean(d == 0)) == pytest.approx(tb.tie, abs=0.015)
    assert float(np.mean(d > 0)) == pytest.approx(tb.better_wins, abs=0.015)
    assert tie_break(0, delta, psi).tie is None
