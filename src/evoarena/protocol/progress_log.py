"""Progress as plain log lines, for output that is not a terminal (a log file, `evolve()`): one line per cell when
its phase changes (after the last state of the phase that ended, when that was held back) and at most one every
`every_s` seconds in between, never the same line twice."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

from evoarena.protocol.progress import CellProgress


def duration(seconds: float | None) -> str:
    """42s, 3m05s, 1h02m; "?" when unknown."""
    if seconds is None:
        return "?"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def calls_text(p: CellProgress) -> str:
    """"12 calls", "12 calls +2 pending" while calls are in flight, "… 3 rejected" once update replies were refused."""
    return (f"{p.calls} calls" + (f" +{p.pending} pending" if p.pending else "")
            + (f" {p.rejected} rejected" if p.rejected else ""))


def eta_text(p: CellProgress) -> str:
    """"eta 3m05s" while the cell runs; "" once it is done."""
    return "" if p.phase == "done" else f"eta {duration(p.eta_s)}"


def line(p: CellProgress) -> str:
    """cell, phase, done/total, the phase's score so far, calls (and those in flight), tokens, ETA."""
    score = f"score {p.score:.2f} ({p.graded})" if p.graded else "score -"
    eta = eta_text(p)
    return (f"{p.cell}  {p.phase}  {p.done}/{p.total}  {score}  {calls_text(p)}  {p.tokens / 1000:.1f}k tok"
            f"  {duration(p.elapsed_s)}" + (f"  {eta}" if eta else ""))


def to_stream(name: str) -> Callable[[str], None]:
    """A writer to `sys.stdout` or `sys.stderr` (`name`), looked up at each write so a swapped stream is followed."""
    def write(text: str) -> None:
        stream = getattr(sys, name)
        stream.write(text)
        stream.flush()
    return write


class PlainLog:
    """A `Progress` callback that writes `line`s, throttled per cell (thread-safe)."""

    def __init__(self, write: Callable[[str], object] | None = None, every_s: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._write = write or to_stream("stderr")
        self.every_s = every_s
        self._clock = clock
        self._last: dict[str, tuple[str, float, str]] = {}  # cell → (phase, when, text) of its last line
        self._held: dict[str, CellProgress] = {}  # cell → its newest update not written (throttled)
        self._lock = threading.Lock()

    def __call__(self, p: CellProgress) -> None:
        with self._lock:
            now = self._clock()
            last = self._last.get(p.cell)
            if last is not None and last[0] == p.phase and now - last[1] < self.every_s:
                self._held[p.cell] = p
                return
            held = self._held.pop(p.cell, None)
            if held is not None and held.phase != p.phase:  # the phase that ended, as it ended (its final score)
                self._put(held, now)
            self._put(p, now)

    def _put(self, p: CellProgress, now: float) -> None:
        text = line(p)
        last = self._last.get(p.cell)
        if last is None or text != last[2]:
            self._last[p.cell] = (p.phase, now, text)
            self._write(text + "\n")
