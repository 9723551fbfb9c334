"""A long-lived Python child under the strongest isolation there is, talking over its stdin and stdout: what
`protocol.isolation: process` runs a method in. Unlike `run_python` it is not a batch job: the caller owns the pipes
and must call `SpawnedChild.close`."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

import evoarena.sandbox.isolation as isolation
from evoarena.sandbox.interpreter import outermost_dirs, resolve_python
from evoarena.sandbox.limits import SandboxLimits
from evoarena.sandbox.process import ProcessTree
from evoarena.sandbox.rlimits import cpu_launcher_argv, killed_by_cpu_limit
from evoarena.sandbox.runner import PYTHON_FLAGS


@dataclass
class SpawnedChild:
    proc: subprocess.Popen[bytes]
    level: str  # "bwrap" or "process" (no filesystem isolation: nothing weaker than bubblewrap hides files)
    tree: ProcessTree

    def killed_by_cpu_limit(self) -> bool:
        """Whether the child (which has exited) was killed at its CPU limit."""
        return killed_by_cpu_limit(self.proc.returncode, bwrap=self.level == "bwrap")

    def close(self) -> None:
        """End the child and everything it started."""
        self.tree.kill_all()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


def spawn_python(module: str, *, writable: str, readable: Sequence[str] = (), masked: Sequence[str] = (),
                 limits: SandboxLimits = SandboxLimits(network=False),  # noqa: B008 - frozen
                 cpu_s: int | None = None, path: Sequence[str] = ()) -> SpawnedChild:
    """`python -E -s -m module` in `writable` (its only writable directory, besides a private /tmp), seeing the
    interpreter, `readable` (directories or single files) and the system's libraries read-only, with `masked`
    directories hidden, no network and a minimal environment (no API keys) — under bubblewrap where it works;
    otherwise a plain child process in a new session with the same environment, which can read what this user can
    (the level says so). `cpu_s`: a limit on its own CPU time (POSIX; RLIMIT_CPU through the rlimits launcher, which
    also kills what it left running and dies with this process). `path`: directories put first on the child's
    sys.path before `module` is imported (isolated mode ignores PYTHONPATH), e.g. where the caller imported its own
    package from."""
    interp = resolve_python(None)
    det = isolation.detect()
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp" if det.bwrap else writable, "LANG": "C.UTF-8",
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    program = [interp.executable, *PYTHON_FLAGS, "-m", module]
    if path:
        boot = (f"import runpy, sys; sys.path[:0] = {[str(p) for p in path]!r}; "
                f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)")
        program = [interp.executable, *PYTHON_FLAGS, "-c", boot]
    if det.bwrap is not None and "bwrap" in det.available:
        dirs = outermost_dirs({*interp.roots, *(p for p in readable if os.path.isdir(p))})
        roots = (*dirs, *(p for p in readable if os.path.isfile(p) and not any(
            p.startswith(d.rstrip(os.sep) + os.sep) for d in dirs)))
        argv, level = [*isolation.bwrap_prefix(det, writable, roots, limits, masked=masked), *program], "bwrap"
        env["TMPDIR"] = "/tmp"
    else:
        argv, level = program, "process"
    launched = False  # under the rlimits launcher, which reaps what the child leaves behind
    if cpu_s is not None and os.name != "nt":
        argv, launched = cpu_launcher_argv(interp.executable, cpu_s, argv), True
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=writable, env=env,
                            start_new_session=os.name != "nt", bufsize=0)
    return SpawnedChild(proc, level, ProcessTree(proc, reaper=launched))
