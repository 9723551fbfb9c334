"""Path checks for harness writes: everything a method writes stays inside the harness root."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath


class HarnessPathError(ValueError):
    """A harness path that is absolute, climbs out, crosses a symlink or leaves the root."""


_DRIVE = re.compile(r"^[A-Za-z]:")
MAX_NAME_BYTES = 200
"""Per path component: below the usual 255-byte file-name limit, with room for a write's temp-file name."""
MAX_DEPTH = 32


def check_relpath(rel: str) -> PurePosixPath:
    """Validate a harness-relative path written with forward slashes; return it normalised."""
    if not rel or "\x00" in rel:
        raise HarnessPathError(f"{rel!r}: empty or contains NUL")
    if "\\" in rel:
        raise HarnessPathError(f"{rel!r}: use forward slashes in harness paths")
    if rel.startswith("/") or _DRIVE.match(rel):
        raise HarnessPathError(f"{rel!r}: absolute paths are refused")
    parts = PurePosixPath(rel).parts
    if any(p in ("..", ".") for p in parts) or not parts:
        raise HarnessPathError(f"{rel!r}: '.' and '..' are refused")
    longest = max(len(p.encode("utf-8", "surrogatepass")) for p in parts)
    if longest > MAX_NAME_BYTES or len(parts) > MAX_DEPTH:
        raise HarnessPathError(f"{rel[:80]!r}{'…' if len(rel) > 80 else ''}: names of at most {MAX_NAME_BYTES} "
                               f"bytes and at most {MAX_DEPTH} levels (got {longest} bytes, {len(parts)} levels)")
    return PurePosixPath(*parts)


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
