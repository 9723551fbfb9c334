"""A cell's ETA learns seconds per call from the cell's own calls (replayed calls not timed) and counts the calls
left per phase, capped by the call budget; the plain log writes one line per phase change and at most one every few
seconds in between, never the same line twice; calls in flight are carried as pending."""

from __future__ import annotations

import pytest

from evoarena.protocol.progress import CellProgress, Tracker
from evoarena.protocol.progress_eta import Eta
from evoarena.protocol.progress_log import PlainLog, duration, line


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_eta_is_seconds_per_call_times_the_calls_left_per_phase() -> None:
    clock, calls = Clock(), [0]
    seen: list[CellProgress] = []
    t = Tracker("c", 10, seen.append, lambda: (calls[0], 0), phases={"practice": 4, "select": 2, "test": 4},
                clock=clock)
    t.phase("practice")
    assert seen[-1].eta_s is None  # no call timed yet
    for _ in range(2):  # a practice step: 2 calls, 1.5 s each
        calls[0] += 2
        clock.now += 3.0
        t.task(1.0)
    # 1.5 s a call × (2 steps × 2 calls + 2 val tasks × 1 call (one solver call a graded task, unseen) + 4 test tasks)
    assert seen[-1].eta_s == pytest.approx(1.5 * (4 + 2 + 4))
    assert seen[-1].elapsed_s == pytest.approx(6.0)
    t.resync()  # calls read back from the store (a resumed unit) in no time: not timed
    calls[0] += 20
    t.resync()
    clock.now += 1.5
    calls[0] += 1
    t.task(0.0)
    assert seen[-1].eta_s == pytest.approx(7.5 / 5 * (25 / 3 + 2 + 4))  # 5 calls timed in 7.5 s; 25 in 3 steps
    t.finish()
    assert seen[-1].eta_s == 0.0 and seen[-1].phase == "done"


def test_a_call_budget_caps_the_calls_left_before_test() -> None:
    eta = Eta({"practice": 100, "select": 10, "test": 10}, max_calls=30, now=0.0)
    eta.enter("practice")
    eta.observe(0, 0.0)
    eta.task()
    eta.observe(3, 6.0)  # one step: 3 calls in 6 s
    assert eta.calls_left(3) == pytest.approx(27 + 10)  # the budget's 27 calls left, then 10 test tasks
    assert eta.seconds_left(3) == pytest.approx(2.0 * 37)
    eta.enter("test")
    assert eta.per_task("test") == 1.0  # no grading phase seen yet: one solver call a task


def test_the_plain_log_throttles_per_cell_and_writes_each_phase_change() -> None:
    clock, lines = Clock(), []
    log = PlainLog(lines.append, every_s=5.0, clock=clock)
    for done in range(1, 4):  # within 5 s: only the first
        log(CellProgress("a", "practice", done, 10, graded=done, score=1.0, calls=done))
    log(CellProgress("b", "practice", 1, 10))  # another cell: its own clock
    assert len(lines) == 2
    clock.now += 6
    log(CellProgress("a", "practice", 4, 10, graded=4, score=0.5, calls=4, pending=2, eta_s=90))
    assert lines[-1].startswith("a  practice  4/10  score 0.50 (4)  4 calls +2 pending") and "eta 1m30s" in lines[-1]
    log(CellProgress("a", "practice", 5, 10, graded=5, score=0.6, calls=5))  # held back
    log(CellProgress("a", "select", 5, 10))  # phase change: the held update (the phase as it ended), then this one
    assert lines[-2].startswith("a  practice  5/10  score 0.60 (5)") and lines[-1].startswith("a  select  5/10")
    log(CellProgress("a", "select", 5, 10))
    clock.now += 6
    log(CellProgress("a", "select", 5, 10))  # the same text again: not written
    assert len(lines) == len(set(lines)) == 5
    assert "eta" not in line(CellProgress("a", "done", 10, 10)) and duration(3700) == "1h01m"


def test_calls_in_flight_are_carried_as_pending_until_the_cell_is_done() -> None:
    seen: list[CellProgress] = []
    flying = [2]
    t = Tracker("c", 3, seen.append, lambda: (5, 50), pending=lambda: flying[0])
    t.phase("test")
    t.task(None)  # a task not graded (a provider error) is done, not graded; in-flight calls are not errors
    assert (seen[-1].calls, seen[-1].pending, seen[-1].graded, seen[-1].done) == (5, 2, 0, 1)
    assert "5 calls +2 pending" in line(seen[-1])
    t.finish()
    assert seen[-1].pending == 0
