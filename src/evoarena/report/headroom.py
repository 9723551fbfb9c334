"""Headroom: what the benchmark lets a harness gain over the baseline, measured by a reference harness (the best
known one, installed unchanged) — its paired difference to the baseline with its CI — and each other condition's
gain as a share of it. A finding either way: methods that found none of a headroom the split detects, or a benchmark
that cannot show a gain at all."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

CANNOT_SHOW = "the benchmark cannot show a gain here: the headroom's CI spans 0"


def headroom(versus: Sequence[Mapping[str, Any]], references: Sequence[str]) -> list[dict[str, Any]] | None:
    """Per model, the first reference condition against the baseline (`versus`: results.json's versus_baseline rows)
    and each other non-baseline condition's difference as a share of it (None unless the headroom is positive).
    None when the run has no reference condition compared with a baseline."""
    rows = [v for v in versus if v["condition"] in references and v["condition"] != v["baseline"]]
    out = []
    for model in dict.fromkeys(v["model"] for v in rows):
        ref = next(v for v in rows if v["model"] == model)
        diff, low, high = ref["diff"], ref["ci_low"], ref["ci_high"]
        detectable = low is not None and high is not None and (low > 0 or high < 0)
        shares = [{"condition": v["condition"], "diff": v["diff"], "share": _share(v["diff"], diff)}
                  for v in versus if v["model"] == model and v["condition"] not in (ref["condition"], v["baseline"])]
        out.append({"model": model, "baseline": ref["baseline"], "control": ref["condition"],
                    "n_paired": ref["n_paired"], "diff": diff, "ci_low": low, "ci_high": high, "mde": ref["mde"],
                    "detectable": detectable, "note": None if detectable else CANNOT_SHOW, "shares": shares})
    return out or None


def _share(gain: float | None, room: float | None) -> float | None:
    if gain is None or room is None or room <= 0:
        return None
    return gain / room
