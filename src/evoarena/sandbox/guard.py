"""The parent's watch over a running sandbox: the scratch directory's disk use and the number of live processes.

Both are enforced by the parent at every isolation level (root is exempt from ``RLIMIT_NPROC``, and no rlimit caps a
directory's total size), by polling: a limit is noticed within one poll period, and the tree is then killed. A
program that writes past the disk quota and exits between two polls is caught by one last scan at its exit.
"""

from __future__ import annotations

import os
import stat
import time

#: Seconds between two scans of the scratch directory (scans of a small directory cost well under a millisecond).
DISK_PERIOD_S = 0.05
#: Every directory entry is charged at least this much, so a flood of empty files also fills the quota.
MIN_ENTRY_BYTES = 4096
_MIB = 1024 * 1024


def disk_usage(root: str, stop_at: int | None = None) -> int:
    """Bytes allocated under `root` (``st_blocks``; sparse holes are free), each entry charged at least
    :data:`MIN_ENTRY_BYTES`; symlinks are counted, never followed. Stops counting once past `stop_at`."""
    total = 0
    stack = [root]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:  # removed meanwhile, or made unreadable: the clean-up deals with it
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            blocks = getattr(st, "st_blocks", None)  # not on Windows: the apparent size there
            total += max(st.st_size if blocks is None else blocks * 512, MIN_ENTRY_BYTES)
            if stat.S_ISDIR(st.st_mode):
                stack.append(entry.path)
            if stop_at is not None and total > stop_at:
                return total
    return total


class SandboxGuard:
    """Says which limit a running sandbox has passed, if any: ``processes`` or ``disk``."""

    def __init__(self, scratch: str, disk_mb: int, max_processes: int) -> None:
        self._scratch = scratch
        self._disk_bytes = disk_mb * _MIB
        self._max_processes = max_processes
        self._next_scan = 0.0

    def breach(self, live_processes: int) -> str | None:
        if live_processes > self._max_processes:
            return "processes"
        now = time.monotonic()
        if now >= self._next_scan:
            self._next_scan = now + DISK_PERIOD_S
            if disk_usage(self._scratch, stop_at=self._disk_bytes) > self._disk_bytes:
                return "disk"
        return None

    def over_disk_quota(self) -> bool:
        """One last scan, whenever the last poll was: the program exited before a poll could see what it wrote."""
        return disk_usage(self._scratch, stop_at=self._disk_bytes) > self._disk_bytes
