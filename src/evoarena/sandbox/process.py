"""Child-process plumbing: capped output readers, the stdin feeder, and killing a process tree."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import IO

import psutil

#: The environment variable that marks every process of one run where no launcher reaps orphans: a double-forked
#: daemon is re-parented out of sight of the snapshots, but keeps the environment it was started with.
RUN_MARK = "EVOARENA_SANDBOX_RUN"
_CHUNK = 65536
_KILL = getattr(signal, "SIGKILL", signal.SIGTERM)
_KILLPG = getattr(os, "killpg", None)


class CappedReader(threading.Thread):
    """Drains a pipe to EOF, keeping at most ``cap`` bytes; the rest is dropped (``truncated``)."""

    def __init__(self, stream: IO[bytes], cap: int) -> None:
        super().__init__(daemon=True)
        self._stream = stream
        self._cap = cap
        self._chunks: list[bytes] = []
        self._kept = 0
        self.truncated = False

    def run(self) -> None:
        try:
            while chunk := self._stream.read(_CHUNK):
                room = self._cap - self._kept
                if room > 0:
                    piece = chunk[:room]
                    self._chunks.append(piece)
                    self._kept += len(piece)
                if len(chunk) > room:
                    self.truncated = True
        except (OSError, ValueError):
            pass
        finally:
            _close(self._stream)

    def text(self) -> str:
        return b"".join(self._chunks).decode("utf-8", errors="replace")


class StdinFeeder(threading.Thread):
    """Writes ``data`` to the child's stdin and closes it; a child that stops reading is fine."""

    def __init__(self, stream: IO[bytes], data: bytes) -> None:
        super().__init__(daemon=True)
        self._stream = stream
        self._data = data

    def run(self) -> None:
        view = memoryview(self._data)
        try:
            while view:
                view = view[self._stream.write(view) or 0 :]
        except (OSError, ValueError):
            pass
        finally:
            _close(self._stream)


def _close(stream: IO[bytes]) -> None:
    with contextlib.suppress(OSError):
        stream.close()


class ProcessTree:
    """Remembers every descendant seen of a child started in its own session / process group, so
    that descendants which left the group (``setsid``) or were orphaned can still be killed."""

    def __init__(self, proc: subprocess.Popen[bytes], *, reaper: bool = False, mark: str | None = None) -> None:
        """`reaper`: the child is the rlimits launcher, which kills what was re-parented to it on SIGTERM.
        `mark`: the value of :data:`RUN_MARK` in the child's environment; at the end, every process started since
        that still carries it is killed too."""
        self._proc = proc
        self._reaper = reaper
        self._mark = mark
        self._started = time.time()
        self._seen: set[psutil.Process] = set()
        self.live = 0  # descendants alive at the last snapshot
        self.breach: str | None = None  # the limit the guard reported, which ended the wait
        try:
            self._root: psutil.Process | None = psutil.Process(proc.pid)
        except psutil.Error:
            self._root = None

    def snapshot(self) -> None:
        if self._root is None:
            return
        with contextlib.suppress(psutil.Error):
            children = self._root.children(recursive=True)
            self.live = len(children)
            self._seen.update(children)

    def wait_exit(self, deadline: float, guard: Callable[[int], str | None] | None = None) -> bool:
        """Wait for the child to exit (without reaping it, where possible), snapshotting its
        descendants meanwhile.  True if it exited before ``deadline`` (a ``time.monotonic()``).
        `guard` is asked after each snapshot, with the number of live descendants; a limit it names
        ends the wait (False) and is kept in ``breach``."""
        delay = 0.0005
        while True:
            if self._exited():
                return True
            now = time.monotonic()
            if now >= deadline:
                return False
            self.snapshot()
            if guard is not None and (breach := guard(self.live)) is not None:
                self.breach = breach
                return False
            time.sleep(min(delay, deadline - now))
            delay = min(delay * 2, 0.05)

    def _exited(self) -> bool:
        if self._proc.returncode is not None:
            return True
        if sys.platform.startswith("linux"):
            # WNOWAIT leaves the exited child a zombie, so its pid (= its process group id) cannot
            # be reused before kill_all() has signalled the group.
            with contextlib.suppress(ChildProcessError):
                flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
                return os.waitid(os.P_PID, self._proc.pid, flags) is not None
        return self._proc.poll() is not None

    def kill_all(self) -> None:
        """Kill the child's process group and every descendant ever seen, then reap the child. A launcher that
        reaps is asked first (SIGTERM, up to a second), so the daemons re-parented to it die too."""
        self.snapshot()
        if self._reaper and not self._exited():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._proc.pid, signal.SIGTERM)
            self.wait_exit(time.monotonic() + 1.0)
        if _KILLPG is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                _KILLPG(self._proc.pid, _KILL)
        if self._proc.returncode is None:
            with contextlib.suppress(OSError):
                self._proc.kill()
        for proc in self._seen:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        self._proc.wait()
        deadline = time.monotonic() + 2.0
        while (alive := [p for p in self._seen if _alive(p)]) and time.monotonic() < deadline:
            time.sleep(0.01)
        for proc in alive:  # e.g. in uninterruptible sleep: one last try
            with contextlib.suppress(psutil.Error):
                proc.kill()
        if self._mark is not None:
            self._sweep_marked()

    def _sweep_marked(self) -> None:
        """Kill the processes carrying this run's mark, until none is left (a daemon may fork meanwhile), for up
        to two seconds. Only processes started since the run are looked at (reading an environment costs more)."""
        deadline = time.monotonic() + 2.0
        while (marked := self._marked()) and time.monotonic() < deadline:
            for proc in marked:
                with contextlib.suppress(psutil.Error):
                    proc.kill()
            time.sleep(0.01)

    def _marked(self) -> list[psutil.Process]:
        found = []
        for proc in psutil.process_iter(["create_time"]):
            if (proc.info.get("create_time") or 0.0) < self._started - 1.0 or not _alive(proc):
                continue
            with contextlib.suppress(psutil.Error):
                if proc.environ().get(RUN_MARK) == self._mark:
                    found.append(proc)
        return found


def _alive(proc: psutil.Process) -> bool:
    """Running and not a zombie (an unreaped zombie is dead, whoever is slow to reap it)."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
