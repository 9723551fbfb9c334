"""The scheduler: results in item order at any limit, failures raised in item order after every item ran, nested maps
that neither deadlock nor start more threads than the limit allows, context variables carried to its threads."""

from __future__ import annotations

import contextvars
import random
import threading
import time

import pytest

from evoarena.protocol.scheduler import SERIAL, Scheduler


@pytest.mark.parametrize("limit", [1, 2, 16])
def test_results_in_item_order(limit: int) -> None:
    s = Scheduler(limit)
    jitter = random.Random(limit)

    def slow_square(x: int) -> int:
        time.sleep(jitter.random() * 0.002)
        return x * x

    assert s.map(slow_square, range(50)) == [x * x for x in range(50)]
    s.close()


def test_every_item_runs_then_the_first_failure_in_item_order_is_raised() -> None:
    s = Scheduler(4)
    ran: list[int] = []
    lock = threading.Lock()

    def f(x: int) -> int:
        time.sleep(0.01 if x == 1 else 0.0)
        with lock:
            ran.append(x)
        if x in (1, 5):
            raise ValueError(f"item {x}")
        return x

    with pytest.raises(ValueError, match="item 1"):
        s.map(f, range(8))
    assert sorted(ran) == list(range(8))
    s.close()


def test_nested_maps_stay_within_the_limit_and_finish() -> None:
    """Cells → episodes → rollouts, three deep: the caller runs what finds no free thread, so nothing waits on a
    thread that cannot start, and no more than `limit` threads ever work at once."""
    s = Scheduler(4)
    busy, peak = 0, 0
    lock = threading.Lock()

    def leaf(x: int) -> int:
        nonlocal busy, peak
        with lock:
            busy += 1
            peak = max(peak, busy)
        time.sleep(0.002)
        with lock:
            busy -= 1
        return x

    def middle(x: int) -> int:
        return sum(s.map(leaf, range(x, x + 5)))

    def top(x: int) -> int:
        return sum(s.map(middle, range(x, x + 4)))

    done = threading.Event()
    out: list[int] = []
    worker = threading.Thread(target=lambda: (out.extend(s.map(top, range(6))), done.set()))
    worker.start()
    assert done.wait(30), "nested maps deadlocked"
    assert out == [sum(sum(range(m, m + 5)) for m in range(t, t + 4)) for t in range(6)]
    assert 1 < peak <= 4
    assert len([t for t in threading.enumerate() if t.name.startswith("evoarena-work")]) <= 3
    s.close()


def test_context_variables_reach_the_threads() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("where", default="unset")
    s = Scheduler(3)
    var.set("cell-a")
    assert s.map(lambda _: var.get(), range(6)) == ["cell-a"] * 6
    s.close()


def test_serial_is_the_calling_thread_and_a_bad_limit_is_refused() -> None:
    me = threading.get_ident()
    assert SERIAL.map(lambda _: threading.get_ident(), range(3)) == [me] * 3
    assert SERIAL.calls is None and not SERIAL.concurrent
    with pytest.raises(ValueError, match=">= 1"):
        Scheduler(0)
