"""POSIX resource limits, applied by a tiny launcher that sets them and then ``exec``s the command. On Linux the
launcher instead stays as the command's parent and a child subreaper: when the command ends (or the host sends the
launcher SIGTERM), every process re-parented to it — a double-forked ``setsid`` daemon — is killed and reaped
before it exits with the command's status. The host's death (a SIGKILLed run) reaches the launcher as SIGTERM
(``PR_SET_PDEATHSIG``), so a killed run leaves no sandboxed program running without its wall-clock limit. The same
launcher can run the command as a uid of its own (root only: then the program can signal no other process), and
serves as the init of a fresh pid namespace (:func:`init_argv`).

A launcher (``python -I -S -c LAUNCHER SPEC HOST_PID cmd...``) is used instead of ``preexec_fn`` because
``preexec_fn`` is unsafe when the parent has threads (the sandbox itself uses reader threads,
and callers may run several sandboxes concurrently).  The limits are inherited across ``exec``
by bubblewrap / unshare and then by the sandboxed interpreter and everything it spawns.
"""

from __future__ import annotations

import os
import secrets
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
#: The uids :func:`own_uid` draws from (0x7E000000 + 24 bits): above the ranges distributions, systemd and container
#: tools allocate, below 2**31 (some tools take uid_t as signed).
OWN_UID_BASE = 0x7E000000
OWN_UID_SPAN = 1 << 24

_LAUNCHER = """\
import os, sys
try:
    import resource
except ImportError:
    resource = None
opts = {}
for item in sys.argv[1].split(","):
    name, _, values = item.partition("=")
    if not name.startswith("RLIMIT_"):
        opts[name] = values
        continue
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
uid = int(opts["uid"]) if "uid" in opts else None
def become():  # in the process about to exec the command: take the program's own uid (gid, no groups), or fail
    if uid is None:
        return
    try:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    except OSError as exc:
        sys.stderr.write("evoarena sandbox: cannot switch to uid %d: %s\\n" % (uid, exc))
        os._exit(126)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid):
        os._exit(126)
if "init" in opts:  # pid 1 of a fresh pid namespace: run the command as pid 2 in its own session, reap every
    import signal  # orphan, and exit with its status (128 + N for a signal: pid 1 cannot die of its own signal)
    signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(128 + signum))
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass
    child = os.fork()
    if child == 0:
        os.setsid()
        become()
        os.execv(sys.argv[3], sys.argv[3:])
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(1)
        if pid == child:
            break
    os._exit(128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
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
    become()
    os.execv(sys.argv[3], sys.argv[3:])
import signal
child = os.fork()
if child == 0:
    become()
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
    try:
        signal.signal(sig, signal.SIG_DFL)
    except (OSError, ValueError):  # SIGKILL and SIGSTOP: always the default
        pass
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


def rlimit_spec(limits: SandboxLimits, uid: int | None = None) -> str:
    """The limits as ``NAME=soft:hard,...`` for the launcher; with `uid` (a uid of the sandbox's own, which runs
    nothing else), ``RLIMIT_NPROC`` is :data:`EXTRA_TASKS`."""
    memory = limits.memory_mb * _MIB
    items = [
        # SIGXCPU at the soft limit; SIGKILL one second later if the program catches SIGXCPU.
        ("RLIMIT_CPU", limits.cpu_s, limits.cpu_s + 1),
        ("RLIMIT_AS", memory, memory),
        ("RLIMIT_FSIZE", FILE_SIZE_BYTES, FILE_SIZE_BYTES),
        ("RLIMIT_CORE", 0, 0),  # SIGXCPU would otherwise dump core into the scratch dir
    ]
    nproc = EXTRA_TASKS if uid is not None else _nproc_limit()
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


def launcher_argv(python: str, limits: SandboxLimits, command: list[str], uid: int | None = None) -> list[str]:
    """``command`` (whose first item must be an absolute path) wrapped so that it runs under rlimits; with `uid`
    (see :func:`own_uid`) it runs as that uid, gid and no supplementary group, while the launcher stays root."""
    return _launch(python, rlimit_spec(limits, uid) + (f",uid={uid}" if uid is not None else ""), command)


def init_argv(python: str, command: list[str]) -> list[str]:
    """``command`` below the launcher as the init of a fresh pid namespace (put it right after ``unshare -p -f``):
    the command runs as pid 2 in a session of its own, so that it gets the usual signal semantics (the kernel
    shields pid 1 from signals it has no handler for, SIGXCPU included); orphans are reaped; when the command ends,
    the init exits with its status (``128 + N`` for a signal N) and the kernel kills what is left in the namespace."""
    return _launch(python, "init=1", command)


def own_uid() -> int:
    """A fresh uid for one sandboxed program run by root: no process, file or user of the machine has it, so the
    program cannot signal (or read the memory and environment of) any process but its own."""
    return OWN_UID_BASE + secrets.randbelow(OWN_UID_SPAN)


def is_own_uid(uid: int) -> bool:
    """Whether `uid` is in the range :func:`own_uid` draws from."""
    return OWN_UID_BASE <= uid < OWN_UID_BASE + OWN_UID_SPAN


def _launch(python: str, spec: str, command: list[str]) -> list[str]:
    """The launcher's argv: the limits, this process's pid (the host whose death it watches), then `command`."""
    return [python, "-I", "-S", "-c", _LAUNCHER, spec, str(os.getpid()), *command]


def killed_by_cpu_limit(returncode: int | None, bwrap: bool) -> bool:
    """RLIMIT_CPU kills with SIGXCPU; bubblewrap reports a child killed by signal N as 128 + N."""
    if _SIGXCPU is None or returncode is None:
        return False
    return returncode == -_SIGXCPU or (bwrap and returncode == 128 + _SIGXCPU)
