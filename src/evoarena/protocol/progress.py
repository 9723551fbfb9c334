"""What a cell reports while it runs: tasks done of tasks planned (a practice step's task, each val task of each
checkpoint, each test task — not units), its phase, the running score of that phase, its calls (and those still in
flight) and tokens, and an ETA learnt from the cell's own call times (`Eta`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from evoarena.protocol.progress_eta import Eta


@dataclass(frozen=True)
class CellProgress:
    """One update of a cell's progress: what `evoarena run` draws and `evolve(progress=...)` receives."""

    cell: str
    phase: str  # "practice" | "select" | "test" | "stages" | "done"
    done: int  # tasks done so far, over all phases
    total: int  # tasks planned (grows if selection grades more checkpoints than planned)
    graded: int = 0  # tasks graded in this phase
    score: float = 0.0  # their mean score (practice: the share of steps whose attempt passed)
    calls: int = 0  # calls that came back (cached ones included)
    tokens: int = 0
    pending: int = 0  # calls in flight now (sent, no answer yet): neither done nor errors
    rejected: int = 0  # update replies refused so far (echo, duplicate, repeated, refusal, malformed: reply_check.py)
    elapsed_s: float = 0.0  # wall seconds since the cell started in this process
    eta_s: float | None = None  # seconds left (None until the cell has timed a call)


Progress = Callable[[CellProgress], None]

PENDING_EVERY_S = 0.5
"""Calls in flight are counted (a ledger query) at most this often per cell."""


class Tally:
    """Counts a cell's calls and tokens outside its budget (the test phase), as a `models.Meter` that never refuses."""

    def __init__(self) -> None:
        self.calls = 0
        self.tokens = 0
        self._lock = threading.Lock()

    def before_call(self) -> None:
        return None

    def after_call(self, tokens: int, usd: float = 0.0) -> None:
        with self._lock:
            self.calls += 1
            self.tokens += tokens


class Tracker:
    """A cell's progress, updated from any of its threads; each update is handed to `report`.

    `phases`: tasks planned per phase (for the ETA; the whole total in the opening phase when not given);
    `max_calls`: the cell's call budget (practice and selection stop at it); `pending`: calls in flight now."""

    def __init__(self, cell: str, total: int, report: Progress | None,
                 spent: Callable[[], tuple[int, int]], *, phases: Mapping[str, int] | None = None,
                 max_calls: int | None = None, pending: Callable[[], int] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._state = CellProgress(cell, "practice", 0, total)
        self._report = report
        self._spent = spent  # (calls, tokens) so far
        self._pending = pending
        self._in_flight, self._looked = 0, float("-inf")  # the last count of calls in flight, and when
        self._clock = clock
        self._start = clock()
        self._eta = Eta(dict(phases or {}), max_calls, self._start)  # its calls baseline: the first look
        self._sum = 0.0
        self._lock = threading.Lock()

    def phase(self, phase: str, *, extra: int = 0) -> None:
        """Enter `phase`; `extra` tasks more than planned (checkpoints beyond the plan)."""
        with self._lock:
            self._eta.observe(self._spent()[0], self._clock())
            self._eta.enter(phase, extra)
            self._sum = 0.0
            self._state = replace(self._state, phase=phase, graded=0, score=0.0, total=self._state.total + extra)
            self._emit()

    def task(self, score: float | None) -> None:
        """One task done; `score` None when it was not graded (a provider error)."""
        with self._lock:
            self._eta.task()
            graded = self._state.graded + (score is not None)
            self._sum += score or 0.0
            self._state = replace(self._state, done=self._state.done + 1, graded=graded,
                                  score=self._sum / graded if graded else 0.0)
            self._emit()

    def rejected(self, n: int) -> None:
        """A practice step refused `n` of its update replies; shown with the calls from the next update on."""
        if n:
            with self._lock:
                self._state = replace(self._state, rejected=self._state.rejected + n)

    def resync(self) -> None:
        """The calls counted since the last update were read back from the store (a resumed unit), not timed now:
        they leave the ETA's seconds per call alone."""
        with self._lock:
            self._eta.skip(self._spent()[0], self._clock())

    def finish(self) -> None:
        with self._lock:
            self._state = replace(self._state, phase="done", done=max(self._state.done, self._state.total))
            self._emit()

    def _emit(self) -> None:
        if self._report is None:
            return
        calls, tokens = self._spent()
        now = self._clock()
        self._eta.observe(calls, now)
        done = self._state.phase == "done"
        if self._pending is not None and now - self._looked >= PENDING_EVERY_S:
            self._in_flight, self._looked = self._pending(), now
        self._state = replace(self._state, calls=calls, tokens=tokens, pending=0 if done else self._in_flight,
                              elapsed_s=now - self._start, eta_s=0.0 if done else self._eta.seconds_left(calls))
        self._report(self._state)
