"""Warm sandbox workers (issue 13): one fork server per (interpreter, network flag) per host process, started once
inside bubblewrap through the same launcher chain as a cold run, so that a program costs a few forks instead of two
interpreter starts and a bubblewrap setup. The server's side is :mod:`evoarena.sandbox.forkserver`.

Only at the ``bwrap`` level, and only where the hardened bubblewrap works (``--unshare-user``): the server needs
capabilities in its own user namespace to give each program a private mount, pid, IPC (and network) namespace before
the program drops them all. Anywhere else :func:`warm_worker` returns None and the caller runs the program cold.

Per program the host makes the stdin/stdout/stderr pipes and a socket pair, and passes the child ends to the server
over the control socket (``SCM_RIGHTS``), so the capped readers and the stdin feeder are those of a cold run. The
program's init process (B) reports its pid over that socket (``SCM_CREDENTIALS``: the kernel translates it into this
process's pid namespace); the host counts the processes of the program's pid namespace through ``/proc/B/root/proc``
for the process limit, polls the scratch dir for the disk quota, and kills B at a limit, which ends the namespace.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import logging
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path

import psutil

import evoarena.sandbox.isolation as isolation
from evoarena.sandbox.guard import SandboxGuard
from evoarena.sandbox.interpreter import Interpreter
from evoarena.sandbox.limits import SandboxLimits, SandboxResult
from evoarena.sandbox.process import CappedReader, ProcessTree, StdinFeeder
from evoarena.sandbox.rlimits import killed_by_cpu_limit, reaper_launcher_argv, rlimit_spec
from evoarena.sandbox.scratch import remove_tree

log = logging.getLogger(__name__)

#: How long a worker may take to start and say it can isolate its programs.
START_TIMEOUT_S = 20.0
#: How long the host waits for a killed program's namespace to be empty.
KILL_GRACE_S = 2.0
_READER_GRACE_S = 5.0
_MIB = 1024 * 1024
_CRED = struct.Struct("iII")


def warm_supported(det: isolation.Detected | None = None) -> bool:
    """Whether this machine can run warm workers at all (Linux, a working hardened bubblewrap)."""
    det = det or isolation.detect()
    return sys.platform.startswith("linux") and det.bwrap is not None and det.hardened and "bwrap" in det.available


class WarmWorker:
    """One fork server and the scratch root it shares with the host. Thread-safe: every program gets its own socket
    pair; the start and restart are serialised."""

    def __init__(self, interp: Interpreter, network: bool, flags: Sequence[str], prefix: str,
                 env: Callable[[str], dict[str, str]]) -> None:
        self.interp = interp
        self.network = network
        self._flags = tuple(flags)
        self._env = env
        self.root = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-warm-")
        self._prefix = prefix
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._ctl: socket.socket | None = None
        self._output: collections.deque[bytes] = collections.deque(maxlen=64)
        self.broken: str | None = None  # why this worker cannot be used (then programs run cold)
        self.starts = 0

    @property
    def pid(self) -> int | None:
        """The launcher's pid (the worker's outermost process), if running."""
        return self._proc.pid if self._proc is not None else None

    def scratch_dir(self) -> str:
        """A fresh scratch dir for one program, inside the root the worker can see."""
        os.makedirs(self.root, mode=0o700, exist_ok=True)
        return tempfile.mkdtemp(prefix=f"{self._prefix}{os.getpid()}-", dir=self.root)

    def run(self, scratch: str, env: Mapping[str, str], stdin: str, limits: SandboxLimits) -> SandboxResult | None:
        """Run the ``main.py`` in `scratch` (made by :meth:`scratch_dir`); None if this worker cannot run it (the
        caller then runs it cold). A worker found dead is restarted and the program tried once more."""
        for _ in range(2):
            ctl, proc = self._ensure()
            if ctl is None or proc is None:
                return None
            result = _run_program(ctl, lambda p=proc: p.poll() is None, scratch, env, stdin, limits)  # type: ignore[misc]
            if result is not None:
                return result
            self._discard(ctl)
        return None

    def _ensure(self) -> tuple[socket.socket | None, subprocess.Popen[bytes] | None]:
        with self._lock:
            if self._proc is not None and self._proc.poll() is not None:
                self._stop_locked()
            if self._ctl is None and self.broken is None:
                self._start_locked()
            return self._ctl, self._proc

    def _start_locked(self) -> None:
        det = isolation.detect()
        os.makedirs(self.root, mode=0o700, exist_ok=True)
        host, server = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        exe = self.interp.executable
        command = [exe, *self._flags, "-c", _server_source(), str(server.fileno()), "1" if self.network else "0",
                   "1" if det.hardened else "0", *self.interp.roots]
        own = SandboxLimits(network=self.network, memory_mb=16)  # the server's own /tmp: each program mounts its own
        argv = reaper_launcher_argv(exe, [*isolation.bwrap_prefix(det, self.root, self.interp.roots, own,
                                                                  worker=True), *command])
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    pass_fds=(server.fileno(),), cwd=self.root, env=self._env(self.root),
                                    start_new_session=True, bufsize=0)
        except OSError as exc:
            host.close()
            self._give_up(f"cannot start: {exc}")
            return
        finally:
            server.close()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        threading.Thread(target=self._drain, args=(proc.stdout,), daemon=True).start()
        self._proc, self._ctl = proc, host
        self.starts += 1
        ready, _, _ = select.select([host], [], [], START_TIMEOUT_S)
        hello = host.recv(4096) if ready else b""
        if hello != b"H":
            self._stop_locked()
            self._give_up(hello[1:].decode(errors="replace") if hello[:1] == b"E" else
                          f"no answer from the server: {self._tail()}")
            return
        probe = self._probe(host, proc)
        if probe is not None:
            self._stop_locked()
            self._give_up(probe)

    def _probe(self, ctl: socket.socket, proc: subprocess.Popen[bytes]) -> str | None:
        """Run one trivial program: a worker that cannot give a program its view or drop its capabilities says so."""
        scratch = self.scratch_dir()
        try:
            Path(scratch, "main.py").write_text("print('ok')\n", encoding="utf-8")
            res = _run_program(ctl, lambda: proc.poll() is None, scratch, self._env(scratch), "", SandboxLimits())
        finally:
            _remove(scratch)
        if res is None or res.stdout != "ok\n" or res.returncode != 0:
            return f"its probe program failed: {res.stderr.strip() if res else self._tail()}"
        return None

    def _give_up(self, why: str) -> None:
        self.broken = why
        log.warning("evoarena.sandbox: no warm worker (programs start cold, as before): %s", why)

    def _drain(self, stream: object) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := stream.read(4096):  # type: ignore[attr-defined]
                self._output.append(chunk)

    def _tail(self) -> str:
        return b"".join(self._output).decode(errors="replace")[-2000:]

    def _discard(self, ctl: socket.socket) -> None:
        """Stop the worker whose control socket is `ctl` (unless another thread restarted it already)."""
        with self._lock:
            if self._ctl is ctl:
                self._stop_locked()

    def _stop_locked(self) -> None:
        ctl, proc = self._ctl, self._proc
        self._ctl = self._proc = None
        if ctl is not None:
            ctl.close()  # the server sees EOF and exits; bubblewrap then ends every process of the worker
        if proc is not None:
            try:
                proc.wait(timeout=KILL_GRACE_S)
            except subprocess.TimeoutExpired:
                ProcessTree(proc, reaper=True).kill_all()

    def close(self) -> None:
        """Stop the worker and remove its scratch root."""
        with self._lock:
            self._stop_locked()
        _remove(self.root)


def _run_program(ctl: socket.socket, alive: Callable[[], bool], scratch: str, env: Mapping[str, str], stdin: str,
                 limits: SandboxLimits) -> SandboxResult | None:
    """One program through the server behind `ctl`; None if the worker died before it could report."""
    start = time.monotonic()
    host, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    host.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    fields = [scratch, rlimit_spec(limits), str(limits.memory_mb * _MIB), *(f"{k}={v}" for k, v in env.items())]
    try:
        socket.send_fds(ctl, ["\0".join(fields).encode("utf-8", "surrogateescape")],
                        [peer.fileno(), in_r, out_w, err_w])
        sent = True
    except OSError:
        sent = False
    finally:
        peer.close()
        for fd in (in_r, out_w, err_w):
            os.close(fd)
    readers = [CappedReader(open(out_r, "rb", buffering=0), limits.output_bytes),  # noqa: SIM115 - the reader closes
               CappedReader(open(err_r, "rb", buffering=0), limits.output_bytes)]  # noqa: SIM115
    feeder = StdinFeeder(open(in_w, "wb", buffering=0), stdin.encode("utf-8"))  # noqa: SIM115
    for thread in (*readers, feeder):
        thread.start()
    watch = _Watch(host, alive if sent else (lambda: False))
    guard = SandboxGuard(scratch, limits.disk_mb, limits.max_processes)
    try:
        limit = watch.wait(start + limits.wall_s, guard.breach)
        elapsed = time.monotonic() - start
        if limit is not None or watch.status is None:
            watch.kill()
    finally:
        host.close()
    for thread in readers:
        thread.join(_READER_GRACE_S)
    if watch.status is None and limit is None:
        return None  # the worker died under the program: the caller restarts it and tries once more
    returncode: int | None = None
    if limit is None and watch.status is not None:
        code = os.waitstatus_to_exitcode(watch.status)
        returncode = 128 - code if code < 0 else code  # a signal as bubblewrap reports it in a cold run: 128 + N
        if killed_by_cpu_limit(returncode, bwrap=True):
            returncode, limit = None, "cpu"
        elif guard.over_disk_quota():  # it wrote past the quota and exited between two polls
            returncode, limit = None, "disk"
    return SandboxResult(
        stdout=readers[0].text(), stderr=readers[1].text(), returncode=returncode,
        timed_out=limit in ("wall", "cpu"), truncated=readers[0].truncated or readers[1].truncated,
        isolation="bwrap", wall_s=round(elapsed, 4), limit=limit, warm=True,
    )  # fmt: skip


class _Watch:
    """The host's end of one program's socket: the init's pid, the status, the process count and the kill."""

    def __init__(self, sock: socket.socket, alive: Callable[[], bool]) -> None:
        self._sock = sock
        self._alive = alive
        self.init_pid: int | None = None  # B, pid 1 of the program's namespace, in this process's pid namespace
        self.status: int | None = None  # C's wait status (or B's, if B died first)
        self.closed = False

    def _receive(self) -> None:
        try:
            msg, anc, _, _ = self._sock.recvmsg(64, socket.CMSG_SPACE(_CRED.size))
        except OSError:
            msg, anc = b"", []
        if not msg:
            self.closed = True
        elif msg[:1] == b"B":
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(data) >= _CRED.size:
                    self.init_pid = _CRED.unpack(data[:_CRED.size])[0] or None
        elif msg[:1] == b"S":
            self.status = int(msg[1:])

    def wait(self, deadline: float, guard: Callable[[int], str | None]) -> str | None:
        """Until the program's status arrives (None), a limit is passed (its name), or the worker is lost (None,
        `status` unset)."""
        delay = 0.0005
        while self.status is None and not self.closed:
            now = time.monotonic()
            if now >= deadline:
                return "wall"
            if select.select([self._sock], [], [], min(delay, deadline - now))[0]:
                self._receive()
                continue
            delay = min(delay * 2, 0.05)
            if not self._alive():
                return None
            if self.init_pid is not None and (breach := guard(self.processes())) is not None:
                return breach
        return None

    def processes(self) -> int:
        """The processes in the program's pid namespace, its init included."""
        try:
            return sum(1 for name in os.listdir(f"/proc/{self.init_pid}/root/proc") if name.isdigit())
        except OSError:
            with contextlib.suppress(psutil.Error):
                return 1 + len(psutil.Process(self.init_pid).children(recursive=True))
        return 0

    def kill(self) -> None:
        """Kill the program's init (the kernel then kills its whole namespace) and wait until A reports it gone.
        B's pid cannot have been reused: A keeps B unreaped until this socket closes."""
        if self.init_pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.init_pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self._sock.send(b"K")  # A kills B too (also when B's pid never arrived)
        deadline = time.monotonic() + KILL_GRACE_S
        while self.status is None and not self.closed and time.monotonic() < deadline:
            if select.select([self._sock], [], [], deadline - time.monotonic())[0]:
                self._receive()


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        remove_tree(path)


_SOURCE: list[str] = []


def _server_source() -> str:
    if not _SOURCE:
        _SOURCE.append(resources.files("evoarena.sandbox").joinpath("forkserver.py").read_text(encoding="utf-8"))
    return _SOURCE[0]


_WORKERS: dict[tuple[str, bool], WarmWorker] = {}
_REGISTRY = threading.Lock()


def warm_worker(interp: Interpreter, network: bool, *, flags: Sequence[str], prefix: str,
                env: Callable[[str], dict[str, str]]) -> WarmWorker | None:
    """The warm worker for this interpreter and network flag (started on first use), or None where warm workers
    cannot work (see :func:`warm_supported`) or this one failed to start."""
    if not warm_supported():
        return None
    key = (interp.executable, network)
    with _REGISTRY:
        worker = _WORKERS.get(key)
        if worker is None:
            worker = _WORKERS[key] = WarmWorker(interp, network, flags, prefix, env)
    return None if worker.broken else worker


def close_workers() -> None:
    """Stop every warm worker of this process and remove their scratch roots (also run at exit)."""
    with _REGISTRY:
        workers = list(_WORKERS.values())
        _WORKERS.clear()
    for worker in workers:
        worker.close()


def _forget_in_child() -> None:
    """A forked copy of the host must neither use nor stop its parent's workers."""
    global _REGISTRY
    _WORKERS.clear()
    _REGISTRY = threading.Lock()


atexit.register(close_workers)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
