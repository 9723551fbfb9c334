"""A run's results (report.collect.run_results: build_results over the store as it is now) for the viewer, kept per
run directory and recomputed only when the store's write mark moved — a refresh of an unchanged run (or a finished
one) costs three small queries, not a bootstrap."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from evoarena.report.collect import run_results
from evoarena.store import RunStore, queries
from evoarena.store.view_conditions import StoreMark, store_mark

_lock = threading.Lock()
_cache: dict[Path, tuple[StoreMark, dict[str, Any]]] = {}
computed = 0  # how many times results were computed (the tests check a refresh of an unchanged run makes none)


def cached_results(store: RunStore) -> dict[str, Any] | None:
    """The run's results as of now; None when the store holds no run yet."""
    global computed
    mark = store_mark(store)
    key = store.run_dir.resolve()
    with _lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] == mark:
            return hit[1]
    if queries.run(store) is None:
        return None
    results = run_results(store)
    with _lock:
        _cache[key] = (mark, results)
        computed += 1
    return results
