"""Path checks for harness writes: everything a method writes stays inside the harness root."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath


class HarnessPathError(ValueError):
    """A harness path that is absolute, climbs out, crosses a symlink or leaves the root."""

    where = ""
    """The cell, step and version the error happened in, once known (see `at`)."""

    def at(self, where: str) -> HarnessPathError:
        """The same error, its one line prefixed by where it happened (unchanged if it already says where)."""
        if self.where:
            return self
        located = type(self)(f"{where}: {self}")
        located.where = where
        return located


_DRIVE = re.compile(r"^[A-Za-z]:")
MAX_NAME_BYTES = 200
"""Per path component: below the usual 255-byte file-name limit, with room for a write's temp-file name."""
MAX_DEPTH = 32
MAX_PATH_BYTES = 1024
"""A whole relative path: far below the OS's 4096-byte path limit, wherever the run directory is."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_relpath(rel: str) -> PurePosixPath:
    """Validate a harness-relative path written with forward slashes; return it normalised."""
    if not rel or "\x00" in rel:
        raise HarnessPathError(f"{rel!r}: empty or contains NUL")
    try:
        size = len(rel.encode("utf-8"))
    except UnicodeEncodeError as err:
        raise HarnessPathError(f"{_short(rel)}: the name is not valid UTF-8 ({err.reason}: character {err.start})"
                               ) from None
    if size > MAX_PATH_BYTES:
        raise HarnessPathError(f"{_short(rel)}: a path of at most {MAX_PATH_BYTES} bytes (got {size})")
    if _CONTROL.search(rel):
        raise HarnessPathError(f"{_short(rel)}: control characters are refused in harness names")
    if "\\" in rel:
        raise HarnessPathError(f"{rel!r}: use forward slashes in harness paths")
    if rel.startswith("/") or _DRIVE.match(rel):
        raise HarnessPathError(f"{rel!r}: absolute paths are refused")
    parts = PurePosixPath(rel).parts
    if any(p in ("..", ".") for p in parts) or not parts:
        raise HarnessPathError(f"{rel!r}: '.' and '..' are refused")
    longest = max(len(p.encode("utf-8")) for p in parts)
    if longest > MAX_NAME_BYTES or len(parts) > MAX_DEPTH:
        raise HarnessPathError(f"{_short(rel)}: names of at most {MAX_NAME_BYTES} "
                               f"bytes and at most {MAX_DEPTH} levels (got {longest} bytes, {len(parts)} levels)")
    return PurePosixPath(*parts)


def _short(rel: str) -> str:
    """`rel` quoted for a one-line message: its first 80 characters."""
    return f"{rel[:80]!r}{'…' if len(rel) > 80 else ''}"


def resolve_inside(root: Path, rel: str) -> Path:
    """Map a checked relative path to a real path under `root`, refusing symlinks on the way."""
    clean = check_relpath(rel)
    root_real = Path(os.path.realpath(root))
    current = root_real
    for part in clean.parts:
        current = current / part
        if current.is_symlink():
            raise HarnessPathError(f"{rel!r}: symlinks are refused ({part})")
    real = Path(os.path.realpath(current))
    if real != root_real and root_real not in real.parents:
        raise HarnessPathError(f"{rel!r}: outside the harness root")
    return real
