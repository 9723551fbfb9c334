"""Sandboxed code cannot signal the process that runs it, where the level promises it (docs/security.md, "Signals"):
in a pid namespace (`bwrap`, `unshare-net+rlimits`) or, at `rlimits` as root, as a uid of its own. Where the level
cannot prevent it (`timeout-only`; `rlimits` as a normal user), the documented behaviour is asserted: the runner dies.

The runner is a separate process in a session of its own, so that a signal that gets through kills it and not pytest.
The sandboxed program sends SIGTERM to the runner's pid, to the runner's process group, and — only once it has
checked that it is confined — to every ancestor it can name, to pid -1 and to its own group (``kill(0)``); where it is
root in a mount namespace of its own, it first unmounts its /proc, uncovering the host's."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sandbox_modes import WARM, run, split_mode

from evoarena.sandbox import isolation
from evoarena.sandbox.interpreter import resolve_python
from evoarena.sandbox.isolation import UNSHARE_FLAGS
from evoarena.sandbox.rlimits import own_uid
from evoarena.sandbox.runner import own_uid_works
from evoarena.sandbox.scratch import SCRATCH_PREFIX, chown_tree, sweep_stale

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals and /proc as on Linux")

MODES = [*isolation.detect().available, *WARM]

ATTACK = textwrap.dedent("""
    import os, signal
    host, host_pgid, host_euid, host_pidns, host_mntns = {host!r}, {pgid!r}, {euid!r}, {pidns!r}, {mntns!r}
    try:
        pidns, mntns = os.readlink("/proc/self/ns/pid"), os.readlink("/proc/self/ns/mnt")
    except OSError:
        pidns, mntns = host_pidns, host_mntns
    confined = pidns != host_pidns or os.geteuid() not in (0, host_euid)
    print("confined" if confined else "unconfined", flush=True)
    if confined and mntns != host_mntns:  # root in its own mount namespace: uncover the host's /proc first
        import ctypes
        print("umount /proc", ctypes.CDLL(None).umount2(b"/proc", 2), flush=True)  # MNT_DETACH

    def attempt(name, send):
        try:
            send()
            print(name, "sent", flush=True)
        except OSError as exc:
            print(name, exc.errno, flush=True)

    attempt("runner", lambda: os.kill(host, signal.SIGTERM))
    attempt("runner-group", lambda: os.killpg(host_pgid, signal.SIGTERM))
    if confined:  # never unconfined: as root these would reach every process on the machine
        attempt("everyone", lambda: os.kill(-1, signal.SIGTERM))
        pid = os.getppid()
        while pid > 0:
            attempt(f"ancestor {{pid}}", lambda: os.kill(pid, signal.SIGTERM))
            try:
                with open(f"/proc/{{pid}}/stat", "rb") as fh:
                    pid = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError):
                break
        attempt("own-group", lambda: os.kill(0, signal.SIGTERM))
    elif os.getppid() == host:
        attempt("parent", lambda: os.kill(os.getppid(), signal.SIGTERM))
""")

RUNNER = textwrap.dedent("""
    import dataclasses, os, sys
    from evoarena.sandbox import SandboxLimits, isolation
    from evoarena.sandbox.runner import run_with
    if sys.argv[5]:  # another of the unshare variants the probe may pick
        forced = dataclasses.replace(isolation.detect(), unshare=tuple(sys.argv[5].split()))
        isolation.detect = lambda: forced
    sys.path.insert(0, sys.argv[3])
    from sandbox_modes import split_mode
    code = sys.argv[1].format(host=os.getpid(), pgid=os.getpgid(0), euid=os.geteuid(),
                              pidns=os.readlink("/proc/self/ns/pid"), mntns=os.readlink("/proc/self/ns/mnt"))
    level, warm = split_mode(sys.argv[2])
    res = run_with(level, code, limits=SandboxLimits(wall_s=20.0, network=bool(sys.argv[6])), warm=warm,
                   python=sys.argv[4] or None)
    print(res.stdout + res.stderr, flush=True)
    print("RUNNER SURVIVED", flush=True)
""")


def _attack(mode: str, python: str = "", unshare: str = "", network: bool = False) -> subprocess.CompletedProcess[str]:
    """The runner, in a session of its own, running the attack at `mode` with `python` (default: this one), and
    `unshare` (a command prefix) instead of the one detected."""
    here = os.path.dirname(__file__)
    return subprocess.run([sys.executable, "-c", RUNNER, ATTACK, mode, here, python, unshare, "1" if network else ""],
                          capture_output=True, text=True, timeout=60, start_new_session=True, check=False)


def _protected(mode: str, python: str) -> bool:
    """What docs/security.md promises for the runner at `mode`."""
    level, _ = split_mode(mode)
    if level in ("bwrap", "unshare-net+rlimits"):
        return True
    return level == "rlimits" and own_uid_works(resolve_python(python or None).executable)


@pytest.mark.parametrize("mode", MODES)
def test_the_runner_survives_where_the_level_promises_it(mode: str) -> None:
    done = _attack(mode)
    if _protected(mode, ""):
        assert done.returncode == 0 and "RUNNER SURVIVED" in done.stdout, (done.stdout, done.stderr)
        assert "confined" in done.stdout.split()  # so the untargeted signals were sent too
    else:  # documented: nothing at this level keeps code running as the runner's user from signalling it
        assert done.returncode == -15, (done.returncode, done.stdout, done.stderr)
        assert "RUNNER SURVIVED" not in done.stdout


def _world_runnable_python() -> str | None:
    """A system interpreter another uid can run (the sandbox's own uid needs one), or None."""
    for name in ("python3",):
        found = shutil.which(name, path="/usr/bin:/bin")
        if found and subprocess.run([found, "-c", "pass"], user=65534, group=65534, extra_groups=[],
                                    capture_output=True, check=False).returncode == 0:
            return found
    return None


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can run the program as a uid of its own")
def test_at_rlimits_as_root_the_program_runs_as_a_uid_of_its_own() -> None:
    python = _world_runnable_python()
    if python is None:
        pytest.skip("no interpreter here that another uid can run")
    assert own_uid_works(resolve_python(python).executable)
    done = _attack("rlimits", python)
    assert done.returncode == 0 and "RUNNER SURVIVED" in done.stdout, (done.stdout, done.stderr)
    assert "runner 1" in done.stdout and "runner-group 1" in done.stdout  # EPERM, not merely a missed pid


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_a_program_killed_by_a_signal_is_reported_as_such(mode: str, signum: int) -> None:
    """-N where the program is waited for directly, 128 + N where an init in its pid namespace reported it."""
    res = run(mode, f"import os\nprint('up', flush=True)\nos.kill(os.getpid(), {int(signum)})")
    level, _ = split_mode(mode)
    assert res.stdout == "up\n" and res.limit is None, res.stderr
    assert res.returncode == (128 + signum if level in ("bwrap", "unshare-net+rlimits") else -signum), res.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="only root runs programs as a uid of their own")
def test_a_killed_runs_scratch_dir_given_to_its_programs_uid_is_swept(tmp_path: Path) -> None:
    """The next run removes it like any other dead owner's; a dir of some other user is left alone."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    given, foreign = tmp_path / f"{SCRATCH_PREFIX}{proc.pid}-own", tmp_path / f"{SCRATCH_PREFIX}{proc.pid}-other"
    for path, uid in ((given, own_uid()), (foreign, 12345)):
        (path / "sub").mkdir(parents=True)
        chown_tree(str(path), uid)
    assert sweep_stale(str(tmp_path)) == (str(given),)
    assert foreign.is_dir()


@pytest.mark.skipif("unshare-net+rlimits" not in MODES, reason="no unshare level here")
@pytest.mark.parametrize("flags", [" ".join(flags) for flags in UNSHARE_FLAGS])
@pytest.mark.parametrize("network", [False, True])
def test_every_unshare_variant_keeps_the_runner_out_of_reach(flags: str, network: bool) -> None:
    """Each prefix the probe may choose, with the network off and on (which runs without ``-n``, recorded as
    ``rlimits``): without ``-m`` the program shares the host's /proc and still cannot name the runner."""
    unshare = shutil.which("unshare")
    assert unshare is not None
    if subprocess.run([unshare, *flags.split(), "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip(f"unshare {flags} does not work here")
    done = _attack("unshare-net+rlimits", unshare=f"{unshare} {flags}", network=network)
    assert done.returncode == 0 and "RUNNER SURVIVED" in done.stdout, (done.stdout, done.stderr)
    assert "confined" in done.stdout.split() and "runner 3" in done.stdout  # ESRCH: no such pid in its namespace
