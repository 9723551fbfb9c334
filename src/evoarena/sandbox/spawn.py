"""A long-lived Python child at a chosen confinement, talking over its stdin and stdout: what
`protocol.isolation: process` runs a method in. Unlike `run_python` it is not a batch job: the caller owns the pipes
and must call `SpawnedChild.close`.

Confinements, strongest first: `bwrap` (bubblewrap: only its own directory writable, the run directory and cache
hidden, no network, its own pid namespace), `namespaces` (`unshare`: its own user, pid, mount and network namespaces
with a fresh /proc, so it cannot see or signal this process nor reach the network, but it reads and writes what this
user can) and `none` (a plain child in its own session). Every level gets the same minimal environment."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import evoarena.sandbox.isolation as isolation
from evoarena.sandbox.interpreter import outermost_dirs, resolve_python
from evoarena.sandbox.limits import SandboxLimits
from evoarena.sandbox.process import ProcessTree
from evoarena.sandbox.rlimits import cpu_launcher_argv, init_argv, killed_by_cpu_limit
from evoarena.sandbox.runner import PYTHON_FLAGS

Confinement = Literal["bwrap", "namespaces", "none"]
CONFINEMENTS: tuple[Confinement, ...] = ("bwrap", "namespaces", "none")
#: own user, pid, mount and network namespaces, a /proc of the new pid namespace, the child killed with `unshare`
UNSHARE_FLAGS = ("--user", "--map-root-user", "--pid", "--fork", "--kill-child", "--mount", "--net", "--mount-proc")
INSTALL_HINT = "install it with `make system-deps` (or `apt-get install bubblewrap`)"


@dataclass
class SpawnedChild:
    proc: subprocess.Popen[bytes]
    level: Confinement  # the confinement it runs at: the one asked for, never a weaker one
    tree: ProcessTree

    def killed_by_cpu_limit(self) -> bool:
        """Whether the child (which has exited) was killed at its CPU limit."""
        return killed_by_cpu_limit(self.proc.returncode, bwrap=self.level != "none")

    def close(self) -> None:
        """End the child and everything it started."""
        self.tree.kill_all()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


def confinement_problem(level: str) -> str | None:
    """None when `level` works on this machine, else what is missing and how to get it (one sentence)."""
    if level == "none":
        return None
    if level == "namespaces":
        if namespaces_prefix():
            return None
        return ("`unshare` cannot make user, pid, mount and network namespaces here (util-linux missing, or "
                "unprivileged user namespaces disabled: sysctl kernel.unprivileged_userns_clone)")
    if level != "bwrap":
        raise ValueError(f"unknown confinement {level!r} (one of {', '.join(CONFINEMENTS)})")
    found = shutil.which("bwrap")
    if found is None:
        return f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}"
    if _bwrap_works(found):
        return None
    return (f"bubblewrap ({found}) does not work here (unprivileged user namespaces disabled?); "
            f"check with `{found} --unshare-all --ro-bind / / true`")


@functools.cache
def _bwrap_works(found: str) -> bool:
    """Whether the bubblewrap at `found` runs a command here (probed without the sandbox's warning about weaker
    levels, so that a refusal is one line)."""
    return isolation._probe_bwrap() is not None


@functools.cache
def namespaces_prefix() -> tuple[str, ...]:
    """The `unshare` command line of the `namespaces` level, if it works here (probed once per process)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return ()
    argv = (unshare, *UNSHARE_FLAGS)
    return argv if isolation.runs_here([*argv, "true"]) else ()


def child_env(home: str) -> dict[str, str]:
    """All the environment a method's process gets, at every level: no API key, token or proxy setting of this
    process reaches it."""
    return {"PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": "/tmp", "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def spawn_python(module: str, *, writable: str, readable: Sequence[str] = (), masked: Sequence[str] = (),
                 limits: SandboxLimits = SandboxLimits(network=False),  # noqa: B008 - frozen
                 cpu_s: int | None = None, path: Sequence[str] = (),
                 confinement: Confinement = "bwrap") -> SpawnedChild:
    """`python -E -s -m module` in `writable` at `confinement` (never weaker: a level that does not work here
    raises), with a minimal environment (`child_env`), only its stdin, stdout and stderr open, in a session of its
    own. Under bubblewrap `writable` is its only writable directory besides a private /tmp, the interpreter,
    `readable` (directories or single files) and the system's libraries are read-only, `masked` directories are
    hidden and there is no network. `cpu_s`: a limit on its own CPU time (POSIX; RLIMIT_CPU through the rlimits
    launcher, which also kills what it left running and dies with this process). `path`: directories put first on
    the child's sys.path before `module` is imported (isolated mode ignores PYTHONPATH), e.g. where the caller
    imported its own package from."""
    problem = confinement_problem(confinement)
    if problem is not None:
        raise RuntimeError(f"a method's process cannot run at confinement {confinement!r}: {problem}")
    interp = resolve_python(None)
    env = child_env("/tmp" if confinement == "bwrap" else writable)
    program = [interp.executable, *PYTHON_FLAGS, "-m", module]
    if path:
        boot = (f"import runpy, sys; sys.path[:0] = {[str(p) for p in path]!r}; "
                f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)")
        program = [interp.executable, *PYTHON_FLAGS, "-c", boot]
    if confinement == "bwrap":
        dirs = outermost_dirs({*interp.roots, *(p for p in readable if os.path.isdir(p))})
        roots = (*dirs, *(p for p in readable if os.path.isfile(p) and not any(
            p.startswith(d.rstrip(os.sep) + os.sep) for d in dirs)))
        argv = [*isolation.bwrap_prefix(isolation.detect(), writable, roots, limits, masked=masked), *program]
    elif confinement == "namespaces":
        # the launcher as the namespace's init (`init_argv`): the kernel drops default-action signals to an init (a
        # CPU limit's SIGXCPU among them), so the method runs below it and its death by a signal is reported as
        # 128 + the signal, as bubblewrap does
        argv = [*namespaces_prefix(), *init_argv(interp.executable, program)]
    else:
        argv = program
    launched = False  # under the rlimits launcher, which reaps what the child leaves behind
    if cpu_s is not None and os.name != "nt":
        argv, launched = cpu_launcher_argv(interp.executable, cpu_s, argv), True
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=writable, env=env,
                            start_new_session=os.name != "nt", close_fds=True, bufsize=0)
    return SpawnedChild(proc, confinement, ProcessTree(proc, reaper=launched))
