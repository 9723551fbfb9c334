"""What seeded, generated benchmarks share: their split sizes checked in one line, and drawing distinct items."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from evoarena.api import ParamError

T = TypeVar("T")


def check_sizes(p: Mapping[str, Any]) -> None:
    """`n_train`, `n_val` >= 0 and `n_test` >= 1, or a one-line ParamError."""
    if min(p["n_train"], p["n_val"]) < 0 or p["n_test"] < 1:
        raise ParamError(f"benchmark.params.n_train/n_val/n_test: expected n_train, n_val >= 0 and n_test >= 1, "
                         f"got {[p['n_train'], p['n_val'], p['n_test']]}")


def distinct(draw: Callable[[int], T], key: Callable[[T], str], n: int, what: str, tries: int = 10_000) -> list[T]:
    """`n` items from `draw(i)` (i: how many are kept so far) whose keys differ; a ValueError naming `what` when
    `tries` draws in all repeat a key (the generator cannot make that many)."""
    seen: set[str] = set()
    out: list[T] = []
    misses = 0
    while len(out) < n:
        item = draw(len(out))
        if key(item) in seen:
            misses += 1
            if misses > tries:
                raise ValueError(f"benchmark.params: cannot draw {n} distinct {what}")
            continue
        seen.add(key(item))
        out.append(item)
    return out
