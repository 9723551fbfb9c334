"""``run_python``: run model-written Python code in a fresh scratch directory under the strongest
isolation this machine offers (see :mod:`evoarena.sandbox.isolation`)."""

from __future__ import annotations

import functools
import logging
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

import evoarena.sandbox.isolation as isolation
import evoarena.sandbox.worker as worker_mod
from evoarena.sandbox.guard import SandboxGuard
from evoarena.sandbox.interpreter import Interpreter, resolve_python
from evoarena.sandbox.limits import SandboxLimits, SandboxResult
from evoarena.sandbox.process import RUN_MARK, CappedReader, ProcessTree, StdinFeeder
from evoarena.sandbox.rlimits import init_argv, killed_by_cpu_limit, launcher_argv, own_uid
from evoarena.sandbox.scratch import SCRATCH_PREFIX, chown_tree, remove_tree, sweep_scratch

MAIN = "main.py"
#: ``-E -s`` is isolated mode (``-I``) minus ``-P``: no PYTHON* variables, no user site-packages,
#: but the scratch dir stays first on sys.path so that ``files`` such as ``helper.py`` are importable.
PYTHON_FLAGS = ("-E", "-s", "-X", "utf8")
_READER_GRACE_S = 5.0
#: What the probe for a uid of its own runs: the interpreter's start-up, site-packages, and a write to the scratch dir.
_PROBE = "import encodings, site\nwith open('probe', 'w') as fh:\n    fh.write('ok')"
log = logging.getLogger(__name__)


def run_python(
    code: str,
    *,
    stdin: str = "",
    files: Mapping[str, str] | None = None,
    limits: SandboxLimits = SandboxLimits(),  # noqa: B008 - frozen, so sharing the default is safe
    python: str | None = None,
) -> SandboxResult:
    """Run ``code`` as ``main.py`` (``python -E -s main.py``) in a fresh scratch directory.

    ``files`` (relative names, ``/`` as separator; no absolute paths, no ``..``) are written next
    to it.  The directory is removed afterwards.  ``python`` defaults to this interpreter.
    """
    return run_with(isolation.detect().level, code, stdin=stdin, files=files, limits=limits, python=python)



def run_with(
    level: str,
    code: str,
    *,
    stdin: str = "",
    files: Mapping[str, str] | None = None,
    limits: SandboxLimits = SandboxLimits(),  # noqa: B008
    python: str | None = None,
    warm: bool | None = None,
) -> SandboxResult:
    """:func:`run_python` at a given isolation level, one of ``detect().available`` (for tests and
    for callers that want a weaker mode on purpose).

    `warm`: run the program in a fresh child of this process's warm worker (:mod:`evoarena.sandbox.worker`; only at
    ``bwrap``) — None uses it where it works, True asks for it (``ValueError`` where it cannot exist here; a worker
    that fails to start still falls back to a cold run), False always starts a sandbox for this program alone."""
    det = isolation.detect()
    if level not in det.available:
        raise ValueError(f"isolation {level!r} is not available here (available: {det.available})")
    if warm and (level != "bwrap" or not worker_mod.warm_supported(det)):
        raise ValueError(f"no warm worker at isolation {level!r} here (only at a working hardened 'bwrap')")
    interp = resolve_python(python)
    names = {name: _safe_parts(name) for name in (files or {})}
    sweep_scratch()
    pool = None
    if level == "bwrap" and warm is not False:
        pool = worker_mod.warm_worker(interp, limits.network, flags=PYTHON_FLAGS, prefix=SCRATCH_PREFIX,
                                      env=lambda root: child_env(interp.executable, root, "bwrap"))
    scratch = pool.scratch_dir() if pool else tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")
    try:
        for name, content in (files or {}).items():
            path = os.path.join(scratch, *names[name])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(content)
        with open(os.path.join(scratch, MAIN), "w", encoding="utf-8", newline="") as fh:
            fh.write(code)
        if pool is not None:
            result = pool.run(scratch, child_env(interp.executable, scratch, level), stdin, limits)
            if result is not None:
                return result
        cmd = _command(level, det, interp, scratch, limits)
        if cmd.uid is not None:
            chown_tree(scratch, cmd.uid)
        return _execute(cmd, child_env(interp.executable, scratch, level), scratch, stdin, limits)
    finally:
        remove_tree(scratch)


def _safe_parts(name: str) -> tuple[str, ...]:
    """The path components of a ``files`` key, refusing anything that could leave the scratch dir."""
    if not isinstance(name, str) or not name or "\x00" in name:
        raise ValueError(f"invalid file name {name!r}")
    for flavour in (PurePosixPath, PureWindowsPath):
        path = flavour(name)
        if path.is_absolute() or path.drive or path.root or ".." in path.parts:
            raise ValueError(f"file names must be relative and stay inside the sandbox: {name!r}")
    parts = tuple(p for p in PureWindowsPath(name).parts if p != ".")
    if not parts:
        raise ValueError(f"invalid file name {name!r}")
    if parts == (MAIN,):
        raise ValueError(f"{MAIN!r} is reserved for the code itself")
    return parts


@dataclass(frozen=True)
class _Command:
    """How one cold run is started."""

    argv: list[str]
    used: str  # the isolation level to record
    uid: int | None = None  # the program's own uid (root runs it as a fresh uid at `rlimits`)
    status_128: bool = False  # a signal death comes back as 128 + N (an init in a pid namespace reported it)
    sweep: bool = False  # no launcher reaps orphans here: find them by the run's mark in their environment


def _command(level: str, det: isolation.Detected, interp: Interpreter, scratch: str, limits: SandboxLimits) -> _Command:
    """The argv to start, the isolation name to record for it, and how the program runs."""
    exe = interp.executable
    program = [exe, *PYTHON_FLAGS, MAIN]
    if level == "timeout-only":
        return _Command(program, level, sweep=True)
    if level == "bwrap":
        inner = isolation.bwrap_prefix(det, scratch, interp.roots, limits) + program
        return _Command(launcher_argv(exe, limits, inner), level, status_128=True)
    if level == "unshare-net+rlimits":  # its own pid namespace even with the network on (then recorded as rlimits)
        unshare = [flag for flag in det.unshare if not (limits.network and flag == "-n")]
        inner = [*unshare, *init_argv(exe, program)]
        return _Command(launcher_argv(exe, limits, inner), "rlimits" if limits.network else level, status_128=True)
    uid = own_uid() if own_uid_works(exe) else None
    return _Command(launcher_argv(exe, limits, program, uid), "rlimits", uid=uid,
                    sweep=not sys.platform.startswith("linux"))


@functools.lru_cache(maxsize=32)
def own_uid_works(exe: str) -> bool:
    """Whether a program can run as a uid of its own here: this process is root (only root may switch uid) on
    POSIX, a scratch dir can be given to another uid, and `exe` starts as that uid and writes there (it cannot if it
    lives under a directory only root may enter, such as a venv or pyenv in ``/root``). Probed once per interpreter."""
    if not hasattr(os, "setuid") or os.geteuid() != 0:
        return False
    uid = own_uid()
    scratch = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")
    try:
        chown_tree(scratch, uid)
        done = subprocess.run(launcher_argv(exe, SandboxLimits(), [exe, *PYTHON_FLAGS, "-c", _PROBE], uid),
                              stdin=subprocess.DEVNULL, capture_output=True, cwd=scratch,
                              env=child_env(exe, scratch, "rlimits"), timeout=isolation.PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        why = str(exc)
    else:
        if done.returncode == 0:
            return True
        why = (done.stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit {done.returncode}"])[-1]
    finally:
        remove_tree(scratch)
    log.warning("at 'rlimits', sandboxed programs run as root, not as a uid of their own, and can signal this "
                "process: %s cannot run as another user here (%s)", exe, why)
    return False


def child_env(exe: str, scratch: str, level: str) -> dict[str, str]:
    """A minimal environment: nothing of the parent's is inherited except what the OS needs."""
    bindir = os.path.dirname(exe)
    if os.name == "nt":
        keep = ("SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "NUMBER_OF_PROCESSORS",
                "PROCESSOR_ARCHITECTURE")  # fmt: skip
        env = {key: os.environ[key] for key in keep if key in os.environ}
        sysroot = env.get("SYSTEMROOT", r"C:\Windows")
        env["PATH"] = os.pathsep.join([bindir, os.path.join(sysroot, "System32"), sysroot])
        env.update(TEMP=scratch, TMP=scratch, USERPROFILE=scratch)
    else:
        env = {"PATH": os.pathsep.join(dict.fromkeys([bindir, "/usr/local/bin", "/usr/bin", "/bin"]))}
        env["TMPDIR"] = "/tmp" if level == "bwrap" else scratch
    env.update(HOME=scratch, LANG="C.UTF-8")
    # One thread per numeric library: fair CPU use, and BLAS thread pools reserve a lot of address space.
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


def _execute(cmd: _Command, env: dict[str, str], scratch: str, stdin: str, limits: SandboxLimits) -> SandboxResult:
    mark = secrets.token_hex(16) if cmd.sweep else None
    if mark is not None:
        env = {**env, RUN_MARK: mark}
    group: dict[str, Any] = (
        {"start_new_session": True}
        if os.name != "nt"
        else {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
    )
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=scratch, env=env, bufsize=0, **group,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    tree = ProcessTree(proc, reaper=cmd.used != "timeout-only", mark=mark)
    readers = [CappedReader(proc.stdout, limits.output_bytes), CappedReader(proc.stderr, limits.output_bytes)]
    guard = SandboxGuard(scratch, limits.disk_mb, limits.max_processes)
    try:
        for thread in (*readers, StdinFeeder(proc.stdin, stdin.encode("utf-8"))):
            thread.start()
        exited = tree.wait_exit(start + limits.wall_s, guard.breach)
        elapsed = time.monotonic() - start
    finally:  # on time-out, on error, and after a normal exit too: leave no background process behind
        tree.kill_all()
    for thread in readers:
        thread.join(_READER_GRACE_S)  # a reader can only hang on a pipe held by a process we missed
    returncode: int | None = proc.returncode if exited else None
    cpu_killed = killed_by_cpu_limit(returncode, bwrap=cmd.status_128)
    if cpu_killed:
        returncode = None
    limit = "cpu" if cpu_killed else tree.breach or (None if exited else "wall")
    if limit is None and guard.over_disk_quota():  # it wrote past the quota and exited between two polls
        limit, returncode = "disk", None
    return SandboxResult(
        stdout=readers[0].text(),
        stderr=readers[1].text(),
        returncode=returncode,
        timed_out=limit in ("wall", "cpu"),
        truncated=readers[0].truncated or readers[1].truncated,
        isolation=cmd.used,
        wall_s=round(elapsed, 4),
        limit=limit,
    )
