"""The Python interpreter a sandbox runs: where it really lives, and which directories it needs."""

from __future__ import annotations

import functools
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from evoarena.sandbox.isolation import PROBE_ENV, PROBE_TIMEOUT_S, SYSTEM_DIRS

log = logging.getLogger(__name__)

_QUERY = (
    "import json, sys; print(json.dumps({'executable': sys.executable, 'prefixes': [sys.prefix, sys.exec_prefix, "
    "sys.base_prefix, sys.base_exec_prefix], 'path': sys.path}))"
)
#: Never bound for a sys.path entry, nor anything above them: a .pth file naming one of these (or `/`) would expose the
#: user's files or hide the sandbox's private /tmp.
_NOT_FROM_PATH = ("/tmp", "/var/tmp", "/dev", "/proc", "/sys", "/run", "/etc", "/home", "/root")


@dataclass(frozen=True)
class Interpreter:
    executable: str  # what to run: the interpreter's own sys.executable (so a pyenv shim is skipped)
    roots: tuple[str, ...]  # directories to bind read-only under bubblewrap (prefixes, venv, sys.path entries)


def resolve_python(python: str | None) -> Interpreter:
    """``python`` (a path or a name on PATH; default: this interpreter) and what it needs."""
    exe = python or sys.executable
    if not exe:
        raise RuntimeError("no Python interpreter given and sys.executable is empty")
    found = exe if os.path.isabs(exe) else shutil.which(exe)
    if found is None or not os.path.exists(found):
        raise FileNotFoundError(f"Python interpreter not found: {exe!r}")
    return _inspect(os.path.abspath(found))


@functools.lru_cache(maxsize=32)
def _inspect(exe: str) -> Interpreter:
    """Ask `exe` where it lives: its real executable, its prefixes (venv and base) and the absolute entries of its
    sys.path (site-packages, and what .pth files add, such as an editable install's source directory) — wherever
    they are, /tmp included, since the sandbox binds them back over its private /tmp."""
    try:
        out = subprocess.run(
            [exe, "-I", "-c", _QUERY], capture_output=True, text=True, env=PROBE_ENV,
            timeout=PROBE_TIMEOUT_S, check=True,
        ).stdout  # fmt: skip
        reported = json.loads(out)
        executable = str(reported["executable"] or "")
        prefixes = [str(p) for p in reported["prefixes"] if p]
        entries = [str(p) for p in reported["path"] if p]
    except (OSError, ValueError, KeyError, TypeError, subprocess.SubprocessError):
        log.warning("could not ask %s for its prefix; binding only the directory above its bin/", exe)
        executable, prefixes, entries = "", [], []
    real = executable if os.path.isabs(executable) and os.path.exists(executable) else exe
    found = {os.path.dirname(os.path.dirname(p)) for p in (real, os.path.realpath(real))}
    found.update(prefixes)
    found.update(_path_roots(entries))
    found |= {os.path.realpath(p) for p in found}
    return Interpreter(real, outermost_dirs(found))


def _path_roots(entries: list[str]) -> set[str]:
    """The sys.path directories to bind: absolute, existing, and not one of (or above) `_NOT_FROM_PATH` or the
    home directory, which are left out with a warning."""
    guarded = {*_NOT_FROM_PATH, os.path.expanduser("~"), tempfile.gettempdir()}
    roots: set[str] = set()
    for entry in entries:
        path = os.path.normpath(entry)
        if not os.path.isabs(path) or not os.path.isdir(path):
            continue
        held = sorted(g for g in guarded if g and _is_within(os.path.realpath(g), os.path.realpath(path)))
        if held:
            log.warning("evoarena.sandbox: not binding the sys.path entry %s (it holds %s)", path, ", ".join(held))
            continue
        roots.add(path)
    return roots


def outermost_dirs(found: set[str]) -> tuple[str, ...]:
    """The outermost of ``found``, leaving out ``/`` and what the system binds already cover."""
    covered = [d for d in SYSTEM_DIRS if os.path.isdir(d) and not os.path.islink(d)]
    roots: list[str] = []
    for path in sorted(os.path.normpath(p) for p in found if p):
        if path == os.sep or not os.path.isdir(path):
            continue
        if any(_is_within(path, parent) for parent in [*covered, *roots]):
            continue
        roots.append(path)
    return tuple(roots)


def _is_within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip(os.sep) + os.sep)
