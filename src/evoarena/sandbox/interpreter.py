"""The Python interpreter a sandbox runs: where it really lives, and which directories it needs."""

from __future__ import annotations

import functools
import json
import logging
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from evoarena.sandbox.isolation import PROBE_ENV, PROBE_TIMEOUT_S, SYSTEM_DIRS

log = logging.getLogger(__name__)

_QUERY = (
    "import json, sys; print(json.dumps([sys.executable, sys.prefix, sys.exec_prefix, sys.base_prefix, "
    "sys.base_exec_prefix]))"
)


@dataclass(frozen=True)
class Interpreter:
    executable: str  # what to run: the interpreter's own sys.executable (so a pyenv shim is skipped)
    roots: tuple[str, ...]  # directories to bind read-only under bubblewrap (prefixes, venv)


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
    try:
        out = subprocess.run(
            [exe, "-I", "-c", _QUERY], capture_output=True, text=True, env=PROBE_ENV,
            timeout=PROBE_TIMEOUT_S, check=True,
        ).stdout  # fmt: skip
        reported = [str(p) for p in json.loads(out) if p]
    except (OSError, ValueError, subprocess.SubprocessError):
        log.warning("could not ask %s for its prefix; binding only the directory above its bin/", exe)
        reported = []
    real = reported[0] if reported and os.path.isabs(reported[0]) and os.path.exists(reported[0]) else exe
    found = {os.path.dirname(os.path.dirname(p)) for p in (real, os.path.realpath(real))}
    found.update(reported[1:])
    found |= {os.path.realpath(p) for p in found}
    return Interpreter(real, outermost_dirs(found))


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
