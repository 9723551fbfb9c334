"""Bootstrap confidence intervals and the number hygiene results.json relies on."""

from __future__ import annotations

import inspect
import math
import warnings
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats as _st

DECIMALS = 6
BOOTSTRAP_METHOD = "percentile"
_NAN3 = (math.nan, math.nan, math.nan)
# scipy >= 1.15 takes `rng`; older releases only `random_state`.
_RNG_KW = "rng" if "rng" in inspect.signature(_st.bootstrap).parameters else "random_state"


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
    kwargs: dict[str, Any] = {_RNG_KW: np.random.default_rng(seed)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _st.bootstrap(
            (arr,),
            np.mean,
            n_resamples=n_resamples,
            confidence_level=level,
            method=BOOTSTRAP_METHOD,
            vectorized=True,
            axis=-1,
            **kwargs,
        )
    low = float(res.confidence_interval.low)
    high = float(res.confidence_interval.high)
    if not (math.isfinite(low) and math.isfinite(high)):
        return (m, m, m)
    return (m, min(low, m), max(high, m))


def stable_seed(*parts: object, base: int = 0) -> int:
    """A bootstrap seed derived from labels, identical across processes (unlike hash())."""
    key = "\x1f".join(str(p) for p in parts).encode()
    return (zlib.crc32(key) + base) % (2**32)


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
