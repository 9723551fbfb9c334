from __future__ import annotations

import math

import pytest

from evoarena.report import bootstrap_ci


def test_ci_contains_mean_and_is_ordered() -> None:
    values = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    m, low, high = bootstrap_ci(values)
    assert m == pytest.approx(0.6)
    assert low <= m <= high
    assert 0.0 <= low < high <= 1.0


def test_ci_narrows_with_more_data() -> None:
    small = [1.0, 0.0] * 10  # n = 20
    large = [1.0, 0.0] * 200  # n = 400, same mean
    _, lo_s, hi_s = bootstrap_ci(small)
    _, lo_l, hi_l = bootstrap_ci(large)
    assert (hi_l - lo_l) < (hi_s - lo_s) / 2


def test_ci_is_reproducible_with_fixed_seed() -> None:
    values = [0.1, 0.5, 0.9, 0.3, 0.7, 0.2]
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)


def test_level_widens_interval() -> None:
    values = [0.1, 0.5, 0.9, 0.3, 0.7, 0.2, 0.4, 0.8]
    _, lo90, hi90 = bootstrap_ci(values, level=0.90)
    _, lo99, hi99 = bootstrap_ci(values, level=0.99)
    assert hi99 - lo99 > hi90 - lo90


def test_empty_gives_nan() -> None:
    assert all(math.isnan(x) for x in bootstrap_ci([]))


@pytest.mark.parametrize("values", [[0.7], [1.0, 1.0, 1.0], [0.0] * 50])
def test_degenerate_gives_point(values: list[float]) -> None:
    m = values[0]
    assert bootstrap_ci(values) == (pytest.approx(m), pytest.approx(m), pytest.approx(m))


def test_two_values_do_not_crash() -> None:
    m, low, high = bootstrap_ci([0.0, 1.0])
    assert m == 0.5 and 0.0 <= low <= m <= high <= 1.0


def test_non_finite_rejected() -> None:
    with pytest.raises(ValueError):
        bootstrap_ci([0.5, float("nan")])


def test_equals_scipy_percentile_bootstrap() -> None:
    """The numpy bootstrap is scipy.stats.bootstrap's percentile method: same interval, bit for bit where the installed
    scipy computes quantiles as `scipy.stats.quantile` does (>= 1.15), within 1e-12 before that."""
    np = pytest.importorskip("numpy")
    st = pytest.importorskip("scipy.stats")
    exact = hasattr(st, "quantile")
    rng = np.random.default_rng(11)
    checked = 0
    for k in range(120):
        n = int(rng.integers(2, 250))
        values = (rng.random(n) < rng.random()).astype(float) if k % 2 else rng.random(n)
        if np.ptp(values) == 0:
            continue
        m, low, high = bootstrap_ci(values.tolist(), seed=k, level=0.9 if k % 3 == 0 else 0.95)
        kw = {"rng": np.random.default_rng(k)} if "rng" in st.bootstrap.__code__.co_varnames else {
            "random_state": np.random.default_rng(k)}
        ref = st.bootstrap((values,), np.mean, n_resamples=2000, confidence_level=0.9 if k % 3 == 0 else 0.95,
                           method="percentile", vectorized=True, axis=-1, **kw).confidence_interval
        want = (min(float(ref.low), m), max(float(ref.high), m))
        if exact:
            assert (low, high) == want, k
        else:
            assert low == pytest.approx(want[0], abs=1e-12) and high == pytest.approx(want[1], abs=1e-12)
        checked += 1
    assert checked > 100
