"""POSIX resource limits, applied by a tiny launcher that sets them and then ``exec``s the command. On Linux the
launcher instead stays as the command's parent and a child subreaper: when the command ends (or the host sends the
launcher SIGTERM), every process re-parented to it — a double-forked ``setsid`` daemon — is killed and reaped
before it exits with the command's status. The host's death (a SIGKILLed run) reaches the launcher as SIGTERM
(``PR_SET_PDEATHSIG``), so a killed run leaves no sandboxed program running without its wall-clock limit.

A launcher (``python -I -S -c LAUNCHER SPEC HOST_PID cmd...``) is used instead of ``preexec_fn`` because
``preexec_fn`` is unsafe when the parent has threads (the sandbox itself uses reader threads,
and callers may run several sandboxes concurrently).  The limits are inherited across ``exec``
by bubblewrap / unshare and then by the sandboxed interpreter and everything it spawns.
"""

from __future__ import annotations

import os
import signal
import sys

import psutil

from evoarena.sandbox.limits import SandboxLimits

_MIB = 1024 * 1024
_SIGXCPU: int | None = getattr(signal, "SIGXCPU", None)
#: Largest file the sandboxed code may write (RLIMIT_FSIZE); writes beyond it fail with EFBIG.
FILE_SIZE_BYTES = 64 * _MIB
#: Threads/processes the sandbox may add on top of what this user already runs (RLIMIT_NPROC).
EXTRA_TASKS = 512

_LAUNCHER = """\
import os, sys
try:
    import resource
except ImportError:
    resource = None
for item in sys.argv[1].split(","):
    name, _, values = item.partition("=")
    res = getattr(resource, name, None)
    if res is None or not values:
        continue
    soft, hard = (int(v) for v in values.split(":"))
    try:
        _, cur_hard = resource.getrlimit(res)
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
            soft = min(soft, hard)
        resource.setrlimit(res, (soft, hard))
    except (ValueError, OSError):
        pass
reaper = False
if sys.platform.startswith("linux"):
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        reaper = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
        if libc.prctl(1, 15, 0, 0, 0) == 0 and os.getppid() != int(sys.argv[2]):  # PR_SET_PDEATHSIG, SIGTERM
            os._exit(137)  # the host died before the death signal was armed
    except (OSError, AttributeError, ValueError):
        reaper = False
if not reaper:
    os.execv(sys.argv[3], sys.argv[3:])
import signal
child = os.fork()
if child == 0:
    os.execv(sys.argv[3], sys.argv[3:])
def children():
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/" + name + "/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == os.getpid():
                out.append(int(name))
    return out
def sweep():
    while True:
        for pid in children():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            return
def stop(signum, frame):
    sweep()
    os._exit(128 + signum)
signal.signal(signal.SIGTERM, stop)
while True:
    try:
        _, status = os.waitpid(child, 0)
        break
    except InterruptedError:
        continue
signal.signal(signal.SIGTERM, signal.SIG_IGN)
sweep()
if os.WIFSIGNALED(status):
    sig = os.WTERMSIG(status)
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)
"""


def cpu_launcher_argv(python: str, cpu_s: int, command: list[str]) -> list[str]:
    """``command`` under the launcher with a CPU-time limit only (no memory or file-size cap): for a long-lived
    process such as a method's own, which also gets the launcher's subreaper and its death with its host."""
    return _launch(python, f"RLIMIT_CPU={cpu_s}:{cpu_s + 1},RLIMIT_CORE=0:0", command)


def reaper_launcher_argv(python: str, command: list[str]) -> list[str]:
    """``command`` under the launcher with no limit but ``RLIMIT_CORE=0``: the warm worker's server, whose
    programs each set their own limits (a process can lower its rlimits, never raise them past the hard ones)."""
    return _launch(python, "RLIMIT_CORE=0:0", command)


def rlimit_spec(limits: SandboxLimits) -> str:
    """The limits as ``NAME=soft:hard,...`` for the launcher."""
    memory = limits.memory_mb * _MIB
    items = [
        # SIGXCPU at the soft limit; SIGKILL one second later if the program catches SIGXCPU.
        ("RLIMIT_CPU", limits.cpu_s, limits.cpu_s + 1),
        ("RLIMIT_AS", memory, memory),
        ("RLIMIT_FSIZE", FILE_SIZE_BYTES, FILE_SIZE_BYTES),
        ("RLIMIT_CORE", 0, 0),  # SIGXCPU would otherwise dump core into the scratch dir
    ]
    nproc = _nproc_limit()
    if nproc is not None:
        items.append(("RLIMIT_NPROC", nproc, nproc))
    return ",".join(f"{name}={soft}:{hard}" for name, soft, hard in items)


def _nproc_limit() -> int | None:
    """A fork-bomb guard: RLIMIT_NPROC counts every task of the real uid, not just the sandbox's.

    It is set only on Linux for non-root users (root is exempt from RLIMIT_NPROC anyway), to the
    user's current task count plus :data:`EXTRA_TASKS`, so that it never breaks a busy desktop.
    """
    if not sys.platform.startswith("linux") or os.geteuid() == 0:
        return None
    uid = os.getuid()
    tasks = 0
    for proc in psutil.process_iter(["uids", "num_threads"]):
        uids, threads = proc.info.get("uids"), proc.info.get("num_threads")
        if uids is not None and uids.real == uid:
            tasks += threads or 1
    return tasks + EXTRA_TASKS


def launcher_argv(python: str, limits: SandboxLimits, command: list[str]) -> list[str]:
    """``command`` (whose first item must be an absolute path) wrapped so that it runs under rlimits."""
    return _launch(python, rlimit_spec(limits), command)


def _launch(python: str, spec: str, command: list[str]) -> list[str]:
    """The launcher's argv: the limits, this process's pid (the host whose death it watches), then `command`."""
    return [python, "-I", "-S", "-c", _LAUNCHER, spec, str(os.getpid()), *command]


def killed_by_cpu_limit(returncode: int | None, bwrap: bool) -> bool:
    """RLIMIT_CPU kills with SIGXCPU; bubblewrap reports a child killed by signal N as 128 + N."""
    if _SIGXCPU is None or returncode is None:
        return False
    return returncode == -_SIGXCPU or (bwrap and returncode == 128 + _SIGXCPU)
