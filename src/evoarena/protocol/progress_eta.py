"""A cell's ETA learnt from its own calls: wall seconds per call so far in the cell (timed in this process, resumed
units left out), times the calls left — per phase, the tasks left times that phase's calls per task (a grading phase
not seen yet: the other grading phase's, else one solver call a task), practice and selection capped by the call
budget."""

from __future__ import annotations

GRADING = ("select", "test")


class Eta:
    """Not thread-safe on its own: the `Tracker` calls it under its lock."""

    def __init__(self, plan: dict[str, int], max_calls: int | None, now: float) -> None:
        self.plan = plan  # tasks planned per phase, in phase order
        self.order = list(plan)
        self.max_calls = max_calls
        self.phase: str | None = None
        self.tasks: dict[str, int] = {}
        self.calls: dict[str, int] = {}
        self._last_calls: int | None = None  # None until the first look
        self._last_t = now
        self.secs = 0.0  # wall seconds timed
        self.timed = 0  # calls made in them

    def enter(self, phase: str, extra: int = 0) -> None:
        self.phase = phase
        self.plan[phase] = self.plan.get(phase, 0) + extra
        if phase not in self.order:
            self.order.append(phase)

    def task(self) -> None:
        if self.phase is not None:
            self.tasks[self.phase] = self.tasks.get(self.phase, 0) + 1

    def observe(self, calls: int, now: float) -> None:
        """Calls counted since the last look were made in the time since then (in the current phase)."""
        if self._last_calls is not None:
            self._count(calls)
            self.timed += calls - self._last_calls
            self.secs += now - self._last_t
        self._last_calls, self._last_t = calls, now

    def skip(self, calls: int, now: float) -> None:
        """Calls counted since the last look were read back, not made: counted in their phase, not timed."""
        self._count(calls)
        self._last_calls, self._last_t = calls, now

    def _count(self, calls: int) -> None:
        if self.phase is not None and self._last_calls is not None:
            self.calls[self.phase] = self.calls.get(self.phase, 0) + calls - self._last_calls

    def per_task(self, phase: str) -> float | None:
        """Calls a task of `phase` takes, as seen so far; None for practice before its first step."""
        if self.tasks.get(phase):
            return self.calls.get(phase, 0) / self.tasks[phase]
        if phase in GRADING:
            other = GRADING[1 - GRADING.index(phase)]
            return self.calls.get(other, 0) / self.tasks[other] if self.tasks.get(other) else 1.0
        return None

    def calls_left(self, calls: int) -> float | None:
        """Calls the cell will still make (None when a phase ahead has no rate yet)."""
        start = self.order.index(self.phase) if self.phase in self.order else 0
        budgeted = free = 0.0
        for phase in self.order[start:]:
            n = max(0, self.plan.get(phase, 0) - self.tasks.get(phase, 0))
            if not n:
                continue
            rate = self.per_task(phase)
            if rate is None:
                return None
            if phase == "test":  # outside the budget
                free += n * rate
            else:
                budgeted += n * rate
        if self.max_calls is not None:
            budgeted = min(budgeted, max(0, self.max_calls - (calls - self.calls.get("test", 0))))
        return budgeted + free

    def seconds_left(self, calls: int) -> float | None:
        if self.timed <= 0:
            return None
        left = self.calls_left(calls)
        return None if left is None else left * self.secs / self.timed
