"""Bootstrap confidence intervals and the number hygiene results.json relies on.

The bootstrap is scipy.stats.bootstrap's percentile method (vectorized, one batch) written out in numpy: the same
resamples from the same Generator and the same quantile (Hyndman & Fan type 7, as `scipy.stats.quantile`), so the
intervals equal scipy's bit for bit (tests/report/test_report_stats.py checks it against the installed scipy) while a
run's report does not pay scipy.stats' ~1 s import.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

DECIMALS = 6
BOOTSTRAP_METHOD = "percentile"
_NAN3 = (math.nan, math.nan, math.nan)


def mean(values: Sequence[float]) -> float:
    """Order-independent mean (math.fsum is correctly rounded); nan for no values."""
    return math.fsum(values) / len(values) if len(values) else math.nan


def bootstrap_ci(
    values: Sequence[float], *, seed: int = 0, n_resamples: int = 2000, level: float = 0.95
) -> tuple[float, float, float]:
    """(mean, low, high): a percentile bootstrap CI of the mean with a fixed seed.

    No values give (nan, nan, nan); one value, or values that are all equal, give (mean, mean, mean),
    since there is no spread to resample. The interval is widened to the mean if resampling noise
    ever leaves the point estimate outside it.
    """
    arr = np.asarray(values, dtype=float).ravel()
    if arr.size == 0:
        return _NAN3
    if not np.all(np.isfinite(arr)):
        raise ValueError("bootstrap_ci: values must be finite")
    if not 0.0 < level < 1.0:
        raise ValueError(f"bootstrap_ci: level must be in (0, 1), got {level}")
    m = mean(arr.tolist())
    if arr.size == 1 or float(np.ptp(arr)) == 0.0:
        return (m, m, m)
    resamples = np.random.default_rng(seed).integers(0, arr.size, (n_resamples, arr.size))
    theta = np.sort(np.mean(arr[resamples], axis=-1))
    alpha = (1.0 - level) / 2
    low, high = quantile7(theta, alpha), quantile7(theta, 1.0 - alpha)
    if not (math.isfinite(low) and math.isfinite(high)):
        return (m, m, m)
    return (m, min(low, m), max(high, m))


def quantile7_at(n: int, p: float) -> tuple[int, int]:
    """The two positions among n sorted values that the type-7 quantile at p interpolates between."""
    jp1 = (p * n + (1.0 - p)) // 1
    return int(min(max(jp1 - 1, 0), n - 1)), int(min(max(jp1, 0), n - 1))


def quantile7(ordered: np.ndarray, p: float) -> float:
    """The type-7 (linear) quantile of sorted values, in scipy.stats.quantile's arithmetic."""
    n = ordered.shape[-1]
    jg = p * n + (1.0 - p)
    g = 0.0 if jg // 1 - 1 < 0 else jg % 1
    lo, hi = quantile7_at(n, p)
    return float((1.0 - g) * ordered[lo] + g * ordered[hi])


def clean(obj: Any) -> Any:
    """Make a value JSON-safe and stable: floats rounded, nan/inf -> None, tuples -> lists, keys -> str."""
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        if not math.isfinite(f):
            return None
        r = round(f, DECIMALS)
        return 0.0 if r == 0 else r  # no "-0.0"
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted((clean(v) for v in obj), key=repr)
    return str(obj)
