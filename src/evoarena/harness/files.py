"""What a harness file may be: a regular file of UTF-8 text under a checked relative name, within the spec's size
caps. A tree is read from disk with each entry's type and size taken from lstat before it is opened (so a FIFO or a
device is never opened to be read, and a sparse 300 MiB file is refused unread); a tree held in memory (a version a
method proposes) passes the same checks before it is stored."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from evoarena.harness.paths import HarnessPathError, check_relpath
from evoarena.spec import HarnessLimits

TMP_SUFFIX = ".evoarena-tmp"
"""Temp files of interrupted writes end so; a tree leaves them out."""
_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFLNK: "a symlink"}
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class HarnessFileError(HarnessPathError):
    """A harness file that cannot be part of a version: not a regular file, over a size cap, not UTF-8 text."""


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n} bytes"


class _Tally:
    """Entries and bytes of one tree so far, refused the moment either passes its cap (None: no size caps)."""

    def __init__(self, limits: HarnessLimits | None) -> None:
        self.limits = limits
        self.entries = 0
        self.bytes = 0

    def entry(self, rel: str) -> None:
        self.entries += 1
        if self.limits is not None and self.entries > self.limits.max_entries:
            raise HarnessFileError(f"{rel!r}: the tree holds more than {self.limits.max_entries} files and "
                                   f"directories (protocol.harness.max_entries)")

    def file(self, rel: str, size: int) -> None:
        """Count a file of `size` bytes, before it is read."""
        self.bytes += size
        if self.limits is None:
            return
        if size > self.limits.max_file_bytes:
            raise HarnessFileError(f"{rel!r}: {_mib(size)}, over the cap of {_mib(self.limits.max_file_bytes)} "
                                   f"per file (protocol.harness.max_file_bytes)")
        if self.bytes > self.limits.max_tree_bytes:
            raise HarnessFileError(f"{rel!r}: the tree passes {_mib(self.limits.max_tree_bytes)} with this file "
                                   f"(protocol.harness.max_tree_bytes)")


def _decode(rel: str, data: bytes) -> str:
    r"""The file's text as Python's text mode reads it (universal newlines: `\r\n` and `\r` become `\n`)."""
    try:
        return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    except UnicodeDecodeError as err:
        raise HarnessFileError(f"{rel!r}: not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start}); "
                               f"harness files are text") from None


def encoded(rel: str, text: str) -> bytes:
    """`text` as the UTF-8 bytes a harness file holds; a one-line error for a string UTF-8 cannot hold."""
    if not isinstance(text, str):
        raise HarnessFileError(f"{rel!r}: a harness file holds text, not {type(text).__name__}")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise HarnessFileError(f"{rel!r}: the text is not valid Unicode ({err.reason}: character {err.start})"
                               ) from None


def check_size(rel: str, size: int, limits: HarnessLimits | None) -> None:
    """Refuse, in one line, a file of `size` bytes over the cap (before it is written or read)."""
    _Tally(limits).file(rel, size)


def read_file(path: str | Path, rel: str, limits: HarnessLimits | None) -> str:
    """The text of the regular file at `path` (`rel` in its harness), within the per-file cap."""
    return _read(path, rel, _Tally(limits))


def _read(path: str | Path, rel: str, tally: _Tally, st: os.stat_result | None = None) -> str:
    """Checked by lstat (`st`, when the caller has it) before it is opened and by fstat after (opened without
    following a link or blocking, so a file swapped for a FIFO in between is refused, not waited on); read to one
    byte past the cap at most."""
    try:
        st = st or os.lstat(path)
    except OSError as err:
        raise HarnessFileError(f"{rel!r}: cannot be read ({err.strerror or err})") from None
    _regular(rel, st.st_mode)
    tally.file(rel, st.st_size)
    cap = None if tally.limits is None else tally.limits.max_file_bytes
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as err:
        raise HarnessFileError(f"{rel!r}: cannot be read ({err.strerror or err})") from None
    with os.fdopen(fd, "rb") as fh:
        _regular(rel, os.fstat(fd).st_mode)
        data = fh.read() if cap is None else fh.read(cap + 1)
    if len(data) != st.st_size:  # it changed between lstat and read: counted as read
        tally.bytes -= st.st_size
        tally.file(rel, len(data))
    return _decode(rel, data)


def _regular(rel: str, mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a file")
        raise HarnessFileError(f"{rel!r}: {kind}, not a regular file; a harness holds regular files only")


def read_tree(root: Path, limits: HarnessLimits | None) -> dict[str, str]:
    """All files under `root` as {posix relpath: text}, sorted; anything but directories and regular UTF-8 files
    under checked names, or past a cap, is a one-line HarnessFileError naming the file."""
    out: dict[str, str] = {}
    tally = _Tally(limits)
    pending = [(str(root), "")]
    while pending:  # os.scandir, not pathlib: every rollout on the live harness reads the tree
        directory, prefix = pending.pop()
        entries = _listing(directory, prefix.rstrip("/") or ".", tally)
        for entry in entries:
            rel = f"{prefix}{entry.name}"
            try:
                check_relpath(rel)
                st = entry.stat(follow_symlinks=False)
            except HarnessPathError as err:
                raise HarnessFileError(str(err)) from None
            except OSError as err:
                raise HarnessFileError(f"{rel!r}: cannot be read ({err.strerror or err})") from None
            tally.entry(rel)
            if stat.S_ISDIR(st.st_mode):
                pending.append((entry.path, f"{rel}/"))
            elif not (entry.name.endswith(TMP_SUFFIX) and stat.S_ISREG(st.st_mode)):
                out[rel] = _read(entry.path, rel, tally, st)
    return dict(sorted(out.items()))


def _listing(directory: str, rel: str, tally: _Tally) -> list[os.DirEntry[str]]:
    """The entries of `directory` in name order; one past the entry cap ends the listing (a directory of millions
    of entries is not read whole)."""
    limits = tally.limits
    entries: list[os.DirEntry[str]] = []
    try:
        with os.scandir(directory) as it:
            for entry in it:
                entries.append(entry)
                if limits is not None and tally.entries + len(entries) > limits.max_entries:
                    raise HarnessFileError(f"{rel!r}: the tree holds more than {limits.max_entries} files "
                                           f"and directories (protocol.harness.max_entries)")
    except OSError as err:
        raise HarnessFileError(f"{rel!r}: cannot be listed ({err.strerror or err})") from None
    return sorted(entries, key=lambda e: e.name)


def check_tree(tree: Mapping[str, str], limits: HarnessLimits | None) -> None:
    """Refuse, in one line naming the file, a tree that could not be checked out as it is: a name that is not a
    canonical relative path (or is both a file and a directory), text UTF-8 cannot hold, a cap passed."""
    tally = _Tally(limits)
    directories: set[str] = set()
    for rel, text in tree.items():
        if not isinstance(rel, str):
            raise HarnessFileError(f"{rel!r}: a harness file's name is text, not {type(rel).__name__}")
        if check_relpath(rel).as_posix() != rel:
            raise HarnessFileError(f"{rel!r}: write it as {check_relpath(rel).as_posix()!r}")
        for parent in list(PurePosixPath(rel).parents)[:-1]:
            if parent.as_posix() in tree:
                raise HarnessFileError(f"{rel!r}: {parent.as_posix()!r} is a file in the same tree")
            if parent.as_posix() not in directories:
                directories.add(parent.as_posix())
                tally.entry(parent.as_posix())
        tally.entry(rel)
        tally.file(rel, len(encoded(rel, text)))
