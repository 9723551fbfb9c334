"""A run's results for the viewer (report.collect.run_results: build_results over the store as it is now), kept per
run directory and recomputed only when the store's write mark moved, so a refresh of an unchanged run costs three
small queries. A finished run's results.json (written from the same store at its end) is read instead of recomputed.
The computation runs in a worker thread: a page waits for it a moment, then shows the last results (or none) marked
as being updated, and its fragment polls until they are ready — a 10k-task run's bootstrap never blocks a page."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from evoarena.report.collect import run_results
from evoarena.report.results import SCHEMA_VERSION
from evoarena.report.results_record import RESULTS_FILE, RunResults
from evoarena.store import RunStore, queries
from evoarena.store.view_conditions import StoreMark, store_mark

WAIT_S = 1.0  # how long a page waits for a computation before it answers with what it has

_lock = threading.Lock()
_cache: dict[Path, tuple[StoreMark, RunResults, str]] = {}  # mark, results, source
_running: dict[Path, tuple[StoreMark, Future[RunResults]]] = {}
_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evoarena-view-results")
computed = 0  # how many times results were computed (the tests check a refresh of an unchanged run makes none)


@dataclass(frozen=True)
class Results:
    """The run's results (None before any are ready), whether they are still being brought up to date, and where
    they came from ("results.json" or "store")."""

    results: RunResults | None
    updating: bool
    source: str


def _finished_file(store: RunStore, run_id: str) -> RunResults | None:
    """The finished run's results.json, when it is this run's and a RunResults of this schema (a file written by
    older code, with other sections, is recomputed from the store instead)."""
    try:
        data = RunResults.read(store.run_dir / RESULTS_FILE)
    except (OSError, ValueError):  # pydantic's ValidationError is a ValueError
        return None
    return data if data.schema_version == SCHEMA_VERSION and data.meta.run_id == run_id else None


def _compute(key: Path, mark: StoreMark) -> RunResults:
    """run_results on a connection of its own, so the pages' queries do not wait behind its big reads."""
    global computed
    own = RunStore(key, read_only=True)
    try:
        results = run_results(own)
        with _lock:
            _cache[key] = (mark, results, "store")
            computed += 1
        return results
    finally:
        own.close()
        with _lock:
            _running.pop(key, None)


def cached_results(store: RunStore, wait: float | None = None) -> Results:
    """The run's results as of now (see the module's docstring); a computation is waited for `wait` seconds (WAIT_S
    when None; the runs list and a run's overview, which refresh every 3 s anyway, wait none)."""
    run = queries.run(store)
    if run is None:
        return Results(None, False, "store")
    mark = store_mark(store)
    key = store.run_dir.resolve()
    with _lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] == mark:
            return Results(hit[1], False, hit[2])
    if run.status == "finished" and (data := _finished_file(store, run.id)) is not None:
        with _lock:
            _cache[key] = (mark, data, "results.json")
        return Results(data, False, "results.json")
    with _lock:
        job = _running.get(key)
        if job is None:  # one computation per run at a time; a newer mark waits for the next refresh
            job = (mark, _pool.submit(_compute, key, mark))
            _running[key] = job
    try:
        return Results(job[1].result(timeout=WAIT_S if wait is None else wait), job[0] != mark, "store")
    except TimeoutError:
        return Results(hit[1] if hit else None, True, hit[2] if hit else "store")
