"""The warm sandbox worker's server: started once inside bubblewrap, it forks a fresh child per program.

It runs as ``python -E -s -X utf8 -c <this file's source> CTL_FD NET USERNS [ROOT ...]`` (so the interpreter that
runs it needs nothing but the standard library, and it is never imported by the host) and never runs user code
itself. Per request (a message on the control socket carrying the program's scratch dir, rlimits and environment, and
four file descriptors: a socket to the host and the program's stdin, stdout and stderr) it forks:

* **A**, in the worker's namespaces: unshares a mount, pid, IPC and UTS namespace (and a network one when the worker
  has no network), makes every mount private, forks B, reports B's wait status to the host and then waits for the
  host to hang up, which keeps B's pid reserved while the host may still kill it;
* **B**, pid 1 of the new pid namespace: mounts a fresh ``/proc`` (``sys``, ``sysrq-trigger``, ``irq`` and ``bus``
  read-only), a fresh size-capped tmpfs on ``/tmp`` and ``/dev/shm`` (binding back, read-only, the interpreter's
  ``ROOT`` directories that lie there: a venv under ``/tmp``), makes ``/dev`` read-only, hides the worker's
  scratch root under an empty read-only tmpfs with only this program's scratch dir bound back at its usual path;
  then tells the host its pid (``SCM_CREDENTIALS`` translate it into the host's pid namespace), forks C, reaps
  orphans, and exits as soon as C does, which makes the kernel kill whatever else is left in the namespace;
* **C**, the program: a new session, its stdio, every other fd closed, cwd the scratch dir, the same rlimits and
  environment as a cold run, every capability dropped (bounding and ambient sets cleared, securebits locked,
  no_new_privs; checked in ``/proc/self/status`` before anything else runs), then ``main.py`` as ``__main__``.

The worker's user namespace is limited to zero further user namespaces at start (``user.max_user_namespaces``), the
equivalent of a cold run's ``--disable-userns``.
"""

from __future__ import annotations

import _frozen_importlib_external
import atexit
import builtins
import contextlib
import ctypes
import gc
import os
import resource
import select
import signal
import socket
import sys
from typing import Any, NoReturn

_libc = ctypes.CDLL(None, use_errno=True)

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x20000, 0x4000000, 0x8000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 1, 24, 28, 38, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
#: noroot, no_setuid_fixup, keep_caps (off) and no_cap_ambient_raise, each locked.
SECURE_BITS = 0b11101111
CAP_SETPCAP, CAP_SYS_ADMIN = 8, 21
CAP_VERSION_3 = 0x20080522
PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus")
MAIN = "main.py"
#: A program's setup failed (a mount, the capability drop): the exit status it is reported with.
SETUP_FAILED = 125
_LAST_CAP: list[int] = []  # /proc/sys/kernel/cap_last_cap, read once at start
_ROOTS: list[str] = []  # the interpreter's directories (prefixes, sys.path entries), bound read-only by bubblewrap
_FRESH = ("/tmp", "/dev/shm")  # what each program gets a fresh tmpfs on


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = [None if v is None else v.encode() for v in (source, target, fstype, data)]
    _check(_libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]), f"mount {target}")


def _prctl(option: int, arg: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)),
           f"prctl {option}")


def _status_fields() -> dict[str, str]:
    with open("/proc/self/status", encoding="ascii") as fh:
        return {key: value.strip() for key, _, value in (line.partition(":") for line in fh)}


def _send(conn: int, data: bytes) -> None:
    with contextlib.suppress(OSError):
        os.write(conn, data)


def main() -> NoReturn:
    ctl = socket.socket(fileno=int(sys.argv[1]))
    net, userns = sys.argv[2] == "1", sys.argv[3] == "1"
    _ROOTS.extend(sys.argv[4:])
    problem = _capable(userns)
    ctl.send(b"E" + problem.encode() if problem else b"H")
    if problem:
        os._exit(1)
    with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as fh:
        _LAST_CAP.append(int(fh.read()))
    gc.freeze()  # the children's collections then leave the server's objects (and their pages) alone
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    ctl_fd = ctl.fileno()
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | (0 if net else CLONE_NEWNET)
    while True:
        ready = select.select([ctl_fd, wake_r], [], [])[0]
        if wake_r in ready:
            os.read(wake_r, 4096)
            _reap()
        if ctl_fd not in ready:
            continue
        try:
            msg, fds, _, _ = socket.recv_fds(ctl, 1 << 20, 4)
        except (InterruptedError, BlockingIOError):
            continue
        if not msg:  # the host closed the control socket: end the worker (bwrap then ends every program)
            os._exit(0)
        if len(fds) == 4 and os.fork() == 0:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.close(ctl.detach())
            os.close(wake_r)
            os.close(wake_w)
            _program_a(msg.decode("utf-8", "surrogateescape").split("\0"), fds, flags)
        for fd in fds:
            os.close(fd)
        del msg, fds


def _capable(userns: bool) -> str:
    """Why this worker cannot give each program a private view and drop its capabilities ('' if it can)."""
    eff = int(_status_fields().get("CapEff") or "0", 16)
    if not eff & (1 << CAP_SYS_ADMIN) or not eff & (1 << CAP_SETPCAP):
        return f"the worker lacks CAP_SYS_ADMIN or CAP_SETPCAP in its user namespace (CapEff {eff:x})"
    if userns:
        try:
            with open("/proc/sys/user/max_user_namespaces", "w", encoding="ascii") as fh:
                fh.write("0")
            with open("/proc/sys/user/max_user_namespaces", encoding="ascii") as fh:
                if fh.read().strip() != "0":
                    return "user.max_user_namespaces did not stay 0"
        except OSError as exc:
            return f"cannot forbid nested user namespaces: {exc}"
    return ""


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _program_a(fields: list[str], fds: list[int], flags: int) -> NoReturn:
    """A: the namespaces, then B; report B's (or C's) status; wait for the host to hang up."""
    conn = fds[0]
    try:
        _check(_libc.unshare(flags), "unshare")
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
    except OSError as exc:
        os.write(fds[3], f"evoarena sandbox worker: {exc}\n".encode())
        _send(conn, b"S%d" % (SETUP_FAILED << 8))
        _hold(conn)
    alive_r, alive_w = os.pipe()
    status_r, status_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(alive_w)
        os.close(status_r)
        _init_b(fields, fds, alive_r, status_w)
    os.close(alive_r)
    os.close(status_w)
    for fd in fds[1:]:
        os.close(fd)
    hung_up = _wait_b(pid, conn)
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    if hung_up:
        os._exit(0)
    reported = os.read(status_r, 64)
    if reported:
        status = int(reported)
    elif info is not None and info.si_code == os.CLD_EXITED:
        status = info.si_status << 8
    else:
        status = info.si_status if info is not None else 9
    _send(conn, b"S%d" % status)
    _hold(conn)


def _wait_b(pid: int, conn: int) -> bool:
    """Until B has exited (left a zombie, so its pid stays reserved). The host may ask for the kill (``K``) or hang
    up meanwhile: B is then killed, which ends everything in its pid namespace. True if the host hung up."""
    try:
        pidfd: int | None = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    hung_up = False
    while True:
        watched = [] if hung_up else [conn]
        if pidfd is not None:
            watched.append(pidfd)
        ready = select.select(watched, [], [], None if pidfd is not None else 0.01)[0]
        if conn in ready:
            try:
                hung_up = not os.read(conn, 64)
            except OSError:
                hung_up = True
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if pidfd in ready if pidfd is not None else os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG):
            return hung_up


def _hold(conn: int) -> NoReturn:
    """Wait until the host closes its end of `conn`, then exit (B's zombie, and so its pid, lives until then)."""
    try:
        while os.read(conn, 64):
            pass
    except OSError:
        pass
    os._exit(0)


def _init_b(fields: list[str], fds: list[int], alive_r: int, status_w: int) -> NoReturn:
    """B: pid 1 of the program's pid namespace: the private view, then C, reaping until C exits."""
    conn, stderr = fds[0], fds[3]
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if select.select([alive_r], [], [], 0)[0]:  # A died before the death signal was armed
            os._exit(1)
        _private_view(fields[0], int(fields[2]))
    except OSError as exc:
        os.write(stderr, f"evoarena sandbox worker: {exc}\n".encode())
        os._exit(SETUP_FAILED)
    _send(conn, b"B")
    os.close(conn)
    child = os.fork()
    if child == 0:
        os.close(alive_r)
        os.close(status_w)
        _run_c(fields, fds[1:])
    for fd in fds[1:]:
        os.close(fd)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(SETUP_FAILED)
        if pid == child:
            os.write(status_w, b"%d" % status)
            os._exit(0)  # the kernel now kills whatever the program left running in this pid namespace


def _private_view(scratch: str, tmp_bytes: int) -> None:
    """This program's mounts: its own /proc, /tmp, /dev/shm and scratch dir, nothing of its siblings'."""
    scratch_fd = os.open(scratch, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    kept = {path: os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC) for path in _ROOTS
            if any(path.startswith(fresh + "/") for fresh in _FRESH)}
    root, name = os.path.split(scratch)
    quiet = MS_NOSUID | MS_NODEV
    _mount("proc", "/proc", "proc", quiet | MS_NOEXEC)
    for sub in PROC_READ_ONLY:
        path = f"/proc/{sub}"
        if os.path.exists(path):
            _mount(path, path, None, MS_BIND | MS_REC)
            _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | quiet | MS_NOEXEC)
    _mount("tmpfs", "/tmp", "tmpfs", quiet, f"size={tmp_bytes},mode=755")
    if os.path.isdir("/dev/shm"):
        _mount("tmpfs", "/dev/shm", "tmpfs", quiet, f"size={tmp_bytes},mode=1777")
    for path, fd in kept.items():  # the interpreter and its site-packages, where the fresh tmpfs hid them
        os.makedirs(path, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | quiet)
        os.close(fd)
    _mount(None, "/dev", None, MS_REMOUNT | MS_BIND | MS_RDONLY | quiet)
    os.makedirs(root, exist_ok=True)
    _mount("tmpfs", root, "tmpfs", quiet, "size=65536,mode=755")
    os.mkdir(scratch, 0o700)
    _mount(f"/proc/self/fd/{scratch_fd}", scratch, None, MS_BIND)
    _mount(None, root, None, MS_REMOUNT | MS_RDONLY | quiet)
    os.close(scratch_fd)


def _run_c(fields: list[str], stdio: list[int]) -> NoReturn:
    """C: the program itself."""
    scratch, spec, env = fields[0], fields[1], fields[3:]
    try:
        os.setsid()
        for target, fd in enumerate(stdio):
            os.dup2(fd, target)
        os.closerange(3, 1 << 20)
        os.chdir(scratch)
        os.environ.clear()
        os.environ.update(item.split("=", 1) for item in env if "=" in item)  # type: ignore[misc]
        _rlimits(spec)
        _drop_capabilities()
    except OSError as exc:
        os.write(2, f"evoarena sandbox worker: {exc}\n".encode())
        os._exit(SETUP_FAILED)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _run_main(os.path.join(scratch, MAIN))


def _rlimits(spec: str) -> None:
    for item in spec.split(","):
        name, _, values = item.partition("=")
        res = getattr(resource, name, None)
        if res is None or not values:
            continue
        soft, hard = (int(v) for v in values.split(":"))
        _, cur_hard = resource.getrlimit(res)
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
            soft = min(soft, hard)
        resource.setrlimit(res, (soft, hard))


def _drop_capabilities() -> None:
    _prctl(PR_SET_SECUREBITS, SECURE_BITS)
    for cap in range(_LAST_CAP[0] + 1):
        _prctl(PR_CAPBSET_DROP, cap)
    _check(_libc.prctl(PR_CAP_AMBIENT, ctypes.c_ulong(PR_CAP_AMBIENT_CLEAR_ALL), ctypes.c_ulong(0),
                       ctypes.c_ulong(0), ctypes.c_ulong(0)), "clear ambient capabilities")
    header = (ctypes.c_uint32 * 2)(CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _check(_libc.capset(header, data), "capset")
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    status = _status_fields()
    for field in ("CapEff", "CapPrm", "CapInh", "CapBnd", "CapAmb"):
        if int(status.get(field) or "1", 16) != 0:
            raise OSError(0, f"{field} is not empty after dropping every capability")
    if status.get("NoNewPrivs") != "1":
        raise OSError(0, "no_new_privs is not set")


def _run_main(path: str) -> NoReturn:
    """``main.py`` as ``__main__``, ending the way ``python main.py`` ends."""
    sys.argv = [MAIN]
    sys.orig_argv = [sys.executable, "-E", "-s", "-X", "utf8", MAIN]
    sys.path[0] = os.path.dirname(path)
    module = type(sys)("__main__")
    module.__dict__.update(__file__=path, __cached__=None, __annotations__={}, __builtins__=builtins,
                           __loader__=_frozen_importlib_external.SourceFileLoader("__main__", path))
    sys.modules["__main__"] = module
    status, interrupted = 0, False
    try:
        with open(path, "rb") as fh:
            code = compile(fh.read(), path, "exec", dont_inherit=True)
    except BaseException as exc:  # noqa: BLE001 - a SyntaxError, as the interpreter reports it (no traceback)
        sys.excepthook(type(exc), exc, exc.with_traceback(None).__traceback__)
        _finish(1, False)
    try:
        exec(code, module.__dict__)
    except SystemExit as exc:
        status = _exit_status(exc)
    except BaseException as exc:  # noqa: BLE001 - the program's uncaught exception, reported without our frame
        tb = exc.__traceback__
        exc.with_traceback(tb.tb_next if tb is not None else None)
        sys.excepthook(type(exc), exc, exc.__traceback__)
        status, interrupted = 1, isinstance(exc, KeyboardInterrupt)
    _finish(status, interrupted)


def _exit_status(exc: SystemExit) -> int:
    code: Any = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    with contextlib.suppress(Exception):
        sys.stderr.write(f"{code}\n")
    return 1


def _finish(status: int, interrupted: bool) -> NoReturn:
    """What the interpreter does at exit: wait for non-daemon threads, run atexit callbacks, flush stdio."""
    threading = sys.modules.get("threading")
    try:
        if threading is not None:
            threading._shutdown()
    except BaseException:  # noqa: BLE001
        pass
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BaseException:  # noqa: BLE001 - e.g. a closed pipe: the interpreter exits with 120
            status = 120 if status == 0 else status
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(status)


if __name__ == "__main__":
    main()
