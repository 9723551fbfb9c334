"""A run-wide stop signal: once one cell stops the run, no role model makes another call."""

from __future__ import annotations

import threading


class RunHalted(RuntimeError):
    """The run is stopping (another cell stopped it, or the user interrupted it); this call was not made."""


class Halt:
    """Set once, by whichever cell stops the run; every role model checks it before each try of a call, and the
    retry back-off wakes on it, so `on_provider_error: stop` under `--parallel` stops every cell promptly."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    def set(self, reason: str) -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise RunHalted(f"the run is stopping: {self.reason}")

    def sleep(self, seconds: float) -> None:
        """A back-off wait that ends early when the run stops."""
        self._event.wait(seconds)
