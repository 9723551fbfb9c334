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
