"""The one write API for harness files: a directory whose every write is checked."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from evoarena.harness.files import TMP_SUFFIX, check_size, encoded, read_file, read_tree
from evoarena.harness.paths import HarnessPathError, resolve_inside
from evoarena.harness.state import parse_records, parse_state, record_line, state_text
from evoarena.spec import HarnessLimits

Tree = dict[str, str]
M = TypeVar("M", bound=BaseModel)


class HarnessWorkspace:
    """A harness directory (`system.md`, `skills/…`, `memory/…`, `harness.toml`) on disk. `limits`: the size caps
    its reads and writes keep (None: none; file types, names and UTF-8 are checked always)."""

    def __init__(self, root: Path, limits: HarnessLimits | None = None) -> None:
        self.root = Path(root)
        self.limits = limits
        self.root.mkdir(parents=True, exist_ok=True)

    def write(self, rel: str, text: str) -> None:
        """Atomic: the text goes to a fresh temp file (created exclusively, so a planted symlink at any temp name is
        never followed), then replaces `rel`. A bad name or text, a cap passed or an OS refusal is a one-line
        HarnessPathError, before anything is written."""
        path = resolve_inside(self.root, rel)
        data = encoded(rel, text)
        check_size(rel, len(data), self.limits)
        if path.is_dir():
            raise HarnessPathError(f"{rel!r}: is a directory")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:40]}.", suffix=TMP_SUFFIX)
        except OSError as err:
            raise HarnessPathError(f"{rel!r}: cannot be written ({err.strerror or err})") from None
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException as err:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(err, OSError):
                raise HarnessPathError(f"{rel!r}: cannot be written ({err.strerror or err})") from None
            raise

    def append(self, rel: str, text: str) -> None:
        self.write(rel, self.read(rel, default="") + text)

    def read(self, rel: str, default: str | None = None) -> str:
        path = resolve_inside(self.root, rel)
        if not path.is_file():
            if default is not None:
                return default
            raise FileNotFoundError(f"harness file {rel!r} does not exist")
        return read_file(path, rel, self.limits)

    def save_state(self, rel: str, value: BaseModel) -> None:
        """Write a method's typed state as `rel` (harness/state.py's one JSON form)."""
        self.write(rel, state_text(value))

    def load_state(self, rel: str, model: type[M], default: M | None = None) -> M:
        """`rel` read back as `model`; `default` when the file is absent (absent with no default: FileNotFoundError);
        a file that does not parse is a one-line HarnessStateError."""
        if default is not None and not self.exists(rel):
            return default
        return parse_state(rel, self.read(rel), model)

    def append_record(self, rel: str, value: BaseModel) -> None:
        """Add one record to the JSON-lines log `rel`."""
        self.append(rel, record_line(value))

    def load_records(self, rel: str, model: type[M]) -> list[M]:
        """The records of the JSON-lines log `rel` ([] when it is absent)."""
        return parse_records(rel, self.read(rel, default=""), model)

    def exists(self, rel: str) -> bool:
        return resolve_inside(self.root, rel).is_file()

    def delete(self, rel: str) -> None:
        path = resolve_inside(self.root, rel)
        if path.is_file():
            path.unlink()

    def tree(self) -> Tree:
        """All files as {posix relpath: text}; anything but regular UTF-8 files and directories under checked
        names (a symlink, a FIFO, a device), or a cap passed, is a one-line HarnessFileError naming the file."""
        return read_tree(self.root, self.limits)

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
                    _remove(child, self.root)
                else:
                    with contextlib.suppress(OSError):  # a directory that still holds kept files stays
                        child.rmdir()
            for name in filenames:
                child = base / name
                rel = child.relative_to(self.root).as_posix()
                if not child.is_symlink() and rel in tree and _holds(child, tree[rel]):
                    kept.add(rel)
                else:
                    _remove(child, self.root)
        for rel, text in tree.items():
            if rel not in kept:
                self.write(rel, text)


def _remove(path: Path, root: Path) -> None:
    """Unlink `path`; a refusal (a directory a method made read-only) is a one-line HarnessPathError naming it."""
    try:
        path.unlink()
    except OSError as err:
        raise HarnessPathError(f"{path.relative_to(root).as_posix()!r}: cannot be removed ({err.strerror or err})"
                               ) from None


def _holds(path: Path, text: str) -> bool:
    """Whether `path` is a regular file holding exactly `text` as `write` writes it (UTF-8, newlines as given)."""
    data = text.encode("utf-8")
    try:
        st = path.lstat()
        return stat.S_ISREG(st.st_mode) and st.st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False
