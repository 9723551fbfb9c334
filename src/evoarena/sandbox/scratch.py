"""Scratch directories of sandboxed programs: removing one whatever the program did to it, and sweeping those a
killed process left behind."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from evoarena.sandbox.rlimits import is_own_uid

SCRATCH_PREFIX = "evoarena-sb-"


def remove_tree(path: str) -> None:
    """Remove ``path`` even if the sandboxed code made parts of it read-only. A failed removal makes the directory it
    happened in writable again, and only a real directory inside ``path``: never a symlink, never anything outside
    (sandboxed code can plant ``d/l -> VICTIM`` and ``chmod d 0500``)."""
    root = os.path.realpath(path)

    def writable(directory: str) -> None:
        with contextlib.suppress(OSError):
            st = os.lstat(directory)
            real = os.path.realpath(directory)
            if stat.S_ISDIR(st.st_mode) and (real == root or real.startswith(root + os.sep)):
                os.chmod(directory, 0o700)

    def retry(func: Callable[..., Any], target: str, *_: Any) -> None:
        writable(os.path.dirname(target))
        if func in (os.rmdir, os.scandir, os.open):  # the target itself is a directory that could not be listed
            writable(target)
        with contextlib.suppress(FileNotFoundError):
            func(target)

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=retry)


@functools.lru_cache(maxsize=1)
def _sweep_once() -> tuple[str, ...]:
    """Once per process, before its first sandbox run: the scratch dirs a killed process left behind."""
    return sweep_stale(tempfile.gettempdir())


def sweep_scratch() -> tuple[str, ...]:
    """The scratch dirs that killed processes left in the temp dir, removed (once per process): a run calls it at its
    start, so a resumed run cleans up after the one that was killed even if it needs no sandbox run itself."""
    return _sweep_once()


def sweep_stale(root: str) -> tuple[str, ...]:
    """Remove the scratch dirs in `root` whose owning process (the pid in the name) is gone — what a SIGKILL leaves —
    and only real directories of this user; returns what was removed. A live pid (or a reused one) is left alone."""
    if os.name == "nt":  # os.kill(pid, 0) would terminate the process there
        return ()
    removed = []
    for name in os.listdir(root):
        pid = name[len(SCRATCH_PREFIX):].partition("-")[0] if name.startswith(SCRATCH_PREFIX) else ""
        path = os.path.join(root, name)
        if not pid.isdigit() or _alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode) and _ours(st.st_uid):
                remove_tree(path)
                removed.append(path)
    return tuple(removed)


def _ours(uid: int) -> bool:
    """Whether a scratch dir owned by `uid` is this user's: its own, or (for root) a program's own uid."""
    if not hasattr(os, "getuid"):
        return True
    return uid == os.getuid() or (os.getuid() == 0 and is_own_uid(uid))


def chown_tree(path: str, uid: int) -> None:
    """Give `path` and everything in it to `uid` (and the group of the same number): the scratch dir of a program
    that runs as a uid of its own. Symlinks are changed themselves, never followed."""
    os.lchown(path, uid, uid)
    for parent, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            os.lchown(os.path.join(parent, name), uid, uid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True

