"""Which isolation this machine offers, and the command prefix that applies it.

Detection runs once per process (cached): bubblewrap is probed by actually running
``bwrap ... true``, ``unshare -n`` likewise.  Anything weaker than bubblewrap is reported once
through :mod:`logging` with what is missing.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from evoarena.sandbox.limits import SandboxLimits

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 15.0
PROBE_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
_MIB = 1024 * 1024

# Top-level system directories bound read-only (or recreated as symlinks when they are symlinks,
# as on merged-/usr systems such as Debian 12 where /lib -> usr/lib).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Only what the interpreter, the dynamic loader, TLS and name lookups need from /etc; never the
# whole directory (it can hold credentials).
_ETC_ENTRIES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "timezone",
    "ssl", "ca-certificates", "ca-certificates.conf", "nsswitch.conf", "host.conf", "hosts",
    "resolv.conf", "gai.conf", "passwd", "group", "mime.types",
)  # fmt: skip

#: What the warm worker's server keeps in its user namespace: mounts and namespaces (SYS_ADMIN), dropping the bounding
#: set and locking securebits (SETPCAP), and setting ``user.max_user_namespaces`` to 0 (SYS_RESOURCE).
WORKER_CAPS = ("CAP_SYS_ADMIN", "CAP_SETPCAP", "CAP_SYS_RESOURCE")

_MISSING = {
    "unshare-net+rlimits": "bubblewrap (bwrap) is missing or does not work here, so the sandboxed code "
    "can read and write whatever this user can; only the network is cut off (unshare -n)",
    "rlimits": "neither bubblewrap nor `unshare -n` works here, so the sandboxed code has this user's "
    "filesystem and network access; only rlimits (CPU, memory, file size) apply",
    "timeout-only": "this platform has no rlimits, namespaces or bubblewrap: only the wall-clock "
    "limit, the output cap and the process-tree kill apply",
}


@dataclass(frozen=True)
class Detected:
    """The outcome of probing this machine (computed once per process)."""

    level: str
    bwrap: str | None = None  # absolute path of a working bwrap
    hardened: bool = False  # bwrap accepts --unshare-user --disable-userns and --size
    unshare: tuple[str, ...] = ()  # a working unshare prefix, e.g. ("/usr/bin/unshare", "-r", "-n", "-p", "-f")
    available: tuple[str, ...] = ()  # every level that works here, strongest first


def isolation_level() -> str:
    """The strongest isolation available on this machine (probed once per process)."""
    return detect().level


@functools.cache
def detect() -> Detected:
    found = _detect()
    if found.level != "bwrap":
        log.warning("evoarena.sandbox uses %r isolation: %s", found.level, _MISSING[found.level])
    return found


def _detect() -> Detected:
    try:
        import resource  # noqa: F401
    except ImportError:
        return Detected("timeout-only", available=("timeout-only",))
    bwrap: Detected | None = None
    unshare: tuple[str, ...] = ()
    if sys.platform.startswith("linux"):
        bwrap = _probe_bwrap()
        unshare = _probe_unshare()
    available = (
        *(("bwrap",) if bwrap else ()),
        *(("unshare-net+rlimits",) if unshare else ()),
        "rlimits",
        "timeout-only",
    )
    return Detected(
        available[0], bwrap=bwrap.bwrap if bwrap else None, hardened=bool(bwrap and bwrap.hardened),
        unshare=unshare, available=available,
    )  # fmt: skip


def _probe_bwrap() -> Detected | None:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None
    for hardened in (True, False):
        probe = Detected("bwrap", bwrap=bwrap, hardened=hardened)
        if runs_here([*bwrap_prefix(probe, None, (), SandboxLimits()), "true"]):
            return probe
    return None


#: `unshare` flags, tried in turn: a network and a pid namespace (``-p -f``), so that the program can name no process
#: outside (none it could signal), with a fresh /proc where the kernel allows mounting one (``-m --mount-proc``);
#: ``-r`` (a user namespace) for a normal user, without it for root where user namespaces are off.
UNSHARE_FLAGS = (
    ("-r", "-n", "-p", "-f", "-m", "--mount-proc"), ("-n", "-p", "-f", "-m", "--mount-proc"),
    ("-r", "-n", "-p", "-f"), ("-n", "-p", "-f"),
)  # fmt: skip


def _probe_unshare() -> tuple[str, ...]:
    unshare = shutil.which("unshare")
    if unshare is not None:
        for flags in UNSHARE_FLAGS:
            if runs_here([unshare, *flags, "true"]):
                return (unshare, *flags)
    return ()


def runs_here(argv: Sequence[str]) -> bool:
    """Whether `argv` (a probe, e.g. `unshare … true`) exits 0 here, within the probe time-out."""
    try:
        done = subprocess.run(
            list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=PROBE_ENV, timeout=PROBE_TIMEOUT_S, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def bwrap_prefix(det: Detected, scratch: str | None, python_roots: Sequence[str], limits: SandboxLimits,
                 masked: Sequence[str] = (), *, worker: bool = False) -> list[str]:
    """The bubblewrap command line that runs what follows it inside the sandbox. `masked` directories (inside a
    read-only root) are hidden under an empty tmpfs; the scratch dir is bound after them, so it may lie inside one.

    `worker`: for the warm worker's fork server (:mod:`evoarena.sandbox.worker`), which needs a few capabilities in
    its own user namespace to give each program a private view (its children drop them all before user code runs).
    It gets them instead of ``--cap-drop ALL`` and without ``--disable-userns``, whose nested user namespace would
    forbid the fresh ``/proc`` mount of each program; the server forbids further user namespaces itself."""
    assert det.bwrap is not None
    argv = [det.bwrap, "--unshare-all"]
    if worker:
        argv += ["--unshare-user"]
    elif det.hardened:
        argv += ["--unshare-user", "--disable-userns"]
    if limits.network:
        argv.append("--share-net")
    argv.append("--die-with-parent")
    if worker:
        argv += [arg for cap in WORKER_CAPS for arg in ("--cap-add", cap)]
    else:
        argv += ["--cap-drop", "ALL"]
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for name in _ETC_ENTRIES:
        path = f"/etc/{name}"
        if os.path.lexists(path):
            argv += ["--ro-bind-try", path, path]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    if det.hardened:  # bound /tmp so that it cannot eat RAM beyond the memory limit
        argv += ["--size", str(limits.memory_mb * _MIB)]
    argv += ["--tmpfs", "/tmp"]
    for root in python_roots:
        argv += ["--ro-bind", root, root]
    for path in masked:
        if os.path.isdir(path):
            argv += ["--tmpfs", path]
    if scratch is not None:
        argv += ["--bind", scratch, scratch]
    argv += ["--remount-ro", "/"]  # the sandbox's root; /tmp and the scratch dir stay writable
    if scratch is not None:
        argv += ["--chdir", scratch]
    return [*argv, "--"]
