"""One scheduler for a run's independent work: cells, episodes, a step's rollouts and asks, val/test grading.

`map(fn, items)` returns `[fn(x) for x in items]` in item order, whatever the concurrency; the work runs on the
calling thread and on up to `limit - 1` helper threads shared by the whole run. An item gets a helper thread only when
one is free, otherwise the caller runs it itself (caller-runs backpressure): nested maps (cells → episodes →
rollouts) never deadlock and never start more threads than the run allows. Model calls are bounded separately, by
`calls` (at most `limit` in flight across the run) and each endpoint's own `concurrency`.

Results are identical at any limit because nothing an item computes depends on when it runs: every draw a method
makes happens on its own thread before it dispatches the work, sample indices and seeds are fixed per item, and
whatever is recorded is recorded in item order by the caller.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Scheduler:
    """A run's concurrency: `limit` 1 runs everything in order on the calling thread, as before there was one."""

    def __init__(self, limit: int = 1) -> None:
        if limit < 1:
            raise ValueError(f"concurrency must be >= 1, got {limit}")
        self.limit = limit
        self.calls: threading.BoundedSemaphore | None = threading.BoundedSemaphore(limit) if limit > 1 else None
        """The run-wide cap on model calls in flight (handed to every RoleModel)."""
        self._free = threading.BoundedSemaphore(limit - 1) if limit > 1 else None
        self._pool = ThreadPoolExecutor(limit - 1, thread_name_prefix="evoarena-work") if limit > 1 else None

    @property
    def concurrent(self) -> bool:
        return self.limit > 1

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """`fn` over `items`, results in item order. Every item runs even when one fails; then the first failure (in
        item order) is raised."""
        todo = list(items)
        if self._pool is None or self._free is None or len(todo) <= 1:
            return [fn(x) for x in todo]
        outcomes: list[Future[R]] = []
        for i, item in enumerate(todo):
            last = i == len(todo) - 1
            if not last and self._free.acquire(blocking=False):
                outcomes.append(self._pool.submit(contextvars.copy_context().run, self._release_after, fn, item))
            else:  # no free thread (or the last item): the caller does it, then goes on dispatching
                outcomes.append(_run_inline(fn, item))
        wait(outcomes)
        return [f.result() for f in outcomes]

    def _release_after(self, fn: Callable[[T], R], item: T) -> R:
        try:
            return fn(item)
        finally:
            assert self._free is not None
            self._free.release()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)


SERIAL = Scheduler(1)
"""Everything in order on the calling thread (a cell whose budget counts calls or tokens uses this inside)."""


def _run_inline(fn: Callable[[T], R], item: T) -> Future[R]:
    done: Future[R] = Future()
    try:
        done.set_result(fn(item))
    except Exception as err:  # noqa: BLE001 - kept for the caller, raised in item order (Ctrl-C goes up at once)
        done.set_exception(err)
    return done
