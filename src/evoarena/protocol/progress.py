"""What a cell reports while it runs: tasks done of tasks planned (a practice step's task, each val task of each
checkpoint, each test task — not units), its phase, the running score of that phase, and its calls and tokens."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class CellProgress:
    cell: str
    phase: str  # "practice" | "select" | "test" | "done"
    done: int  # tasks done so far, over all phases
    total: int  # tasks planned (grows if selection grades more checkpoints than planned)
    graded: int = 0  # tasks graded in this phase
    score: float = 0.0  # their mean score (practice: the share of steps whose attempt passed)
    calls: int = 0
    tokens: int = 0


Progress = Callable[[CellProgress], None]


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
    """A cell's progress, updated from any of its threads; each update is handed to `report`."""

    def __init__(self, cell: str, total: int, report: Progress | None,
                 spent: Callable[[], tuple[int, int]]) -> None:
        self._state = CellProgress(cell, "practice", 0, total)
        self._report = report
        self._spent = spent  # (calls, tokens) so far
        self._sum = 0.0
        self._lock = threading.Lock()

    def phase(self, phase: str, *, extra: int = 0) -> None:
        """Enter `phase`; `extra` tasks more than planned (checkpoints beyond the plan)."""
        with self._lock:
            self._sum = 0.0
            self._state = replace(self._state, phase=phase, graded=0, score=0.0, total=self._state.total + extra)
            self._emit()

    def task(self, score: float | None) -> None:
        """One task done; `score` None when it was not graded (a provider error)."""
        with self._lock:
            graded = self._state.graded + (score is not None)
            self._sum += score or 0.0
            self._state = replace(self._state, done=self._state.done + 1, graded=graded,
                                  score=self._sum / graded if graded else 0.0)
            self._emit()

    def finish(self) -> None:
        with self._lock:
            self._state = replace(self._state, phase="done", done=max(self._state.done, self._state.total))
            self._emit()

    def _emit(self) -> None:
        if self._report is not None:
            calls, tokens = self._spent()
            self._state = replace(self._state, calls=calls, tokens=tokens)
            self._report(self._state)
