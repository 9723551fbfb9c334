"""The one write API for harness files: a directory whose every write is checked."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from evoarena.harness.paths import HarnessPathError, resolve_inside

Tree = dict[str, str]
TMP_SUFFIX = ".evoarena-tmp"
"""Temp files of interrupted writes end so; `tree()` leaves them out."""


class HarnessWorkspace:
    """A harness directory (`system.md`, `skills/…`, `memory/…`, `harness.toml`) on disk."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def write(self, rel: str, text: str) -> None:
        """Atomic: the text goes to a fresh temp file (created exclusively, so a planted symlink at any temp name is
        never followed), then replaces `rel`. An OS refusal is a one-line HarnessPathError."""
        path = resolve_inside(self.root, rel)
        if path.is_dir():
            raise HarnessPathError(f"{rel!r}: is a directory")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:40]}.", suffix=TMP_SUFFIX)
        except OSError as err:
            raise HarnessPathError(f"{rel!r}: cannot be written ({err.strerror or err})") from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def append(self, rel: str, text: str) -> None:
        self.write(rel, self.read(rel, default="") + text)

    def read(self, rel: str, default: str | None = None) -> str:
        path = resolve_inside(self.root, rel)
        if not path.is_file():
            if default is not None:
                return default
            raise FileNotFoundError(f"harness file {rel!r} does not exist")
        return path.read_text(encoding="utf-8")

    def exists(self, rel: str) -> bool:
        return resolve_inside(self.root, rel).is_file()

    def delete(self, rel: str) -> None:
        path = resolve_inside(self.root, rel)
        if path.is_file():
            path.unlink()

    def tree(self) -> Tree:
        """All files as {posix relpath: text}; a symlink anywhere in the tree is an error."""
        out: Tree = {}
        pending = [(str(self.root), "")]
        while pending:  # os.scandir, not pathlib: every rollout on the live harness reads the tree
            directory, prefix = pending.pop()
            with os.scandir(directory) as entries:
                for entry in entries:
                    rel = f"{prefix}{entry.name}"
                    if entry.is_symlink():
                        raise HarnessPathError(f"{rel}: symlinks are refused")
                    if entry.is_dir(follow_symlinks=False):
                        pending.append((entry.path, f"{rel}/"))
                    elif not entry.name.endswith(TMP_SUFFIX):
                        with open(entry.path, encoding="utf-8") as fh:
                            out[rel] = fh.read()
        return dict(sorted(out.items()))

    def replace_all(self, tree: Mapping[str, str]) -> None:
        """Make the directory hold exactly `tree` (checkout / rollback). Files already holding their text stay as they
        are (a practice step restores the version it starts from, mostly unchanged); everything else — other files,
        symlinks, temp files, emptied directories — is removed and the rest written."""
        kept: set[str] = set()
        for dirpath, dirnames, filenames in os.walk(self.root, topdown=False):
            base = Path(dirpath)
            for name in dirnames:
                child = base / name
                if child.is_symlink():
                    child.unlink()
                else:
                    with contextlib.suppress(OSError):  # a directory that still holds kept files stays
                        child.rmdir()
            for name in filenames:
                child = base / name
                rel = child.relative_to(self.root).as_posix()
                if not child.is_symlink() and rel in tree and _holds(child, tree[rel]):
                    kept.add(rel)
                else:
                    child.unlink()
        for rel, text in tree.items():
            if rel not in kept:
                self.write(rel, text)


def _holds(path: Path, text: str) -> bool:
    """Whether the regular file `path` holds exactly `text` as `write` writes it (UTF-8, newlines as given)."""
    data = text.encode("utf-8")
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False
