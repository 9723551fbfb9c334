"""Hostile programs the parent's guard must stop at every isolation level (issue 12): a bounded fork bomb, a disk
flood of big files, a flood of empty files, an 8 GiB allocation and 200 MB of output. The bomb and the floods are
bounded themselves (at most 512 processes, 512 MB, 100,000 files), so a guard that fails cannot take the CI machine
down with it; each test asserts the sandbox stopped them well before their own bound."""

from __future__ import annotations

import os
import uuid

import psutil
import pytest
from sandbox_modes import WARM, run

from evoarena.sandbox import SandboxLimits, guard, isolation
from evoarena.sandbox.guard import MIN_ENTRY_BYTES, disk_usage

# every level cold, and bwrap through the warm worker
LEVELS = [*isolation.detect().available, *WARM]
RLIMITED = [lvl for lvl in LEVELS if lvl != "timeout-only"]


FORK_BOMB = """
import os, sys, time
if len(sys.argv) < 2:  # re-exec with the token on the command line, so the test can find every process
    os.execv(sys.executable, [sys.executable, "main.py", {token!r}])
for _ in range(9):  # every process forks at each step: up to 2**9 = 512 processes
    try:
        os.fork()
    except OSError:  # RLIMIT_NPROC (unprivileged users): keep what there is
        pass
print("bomb armed", flush=True)
time.sleep(60)
"""


def _procs_with(token: str) -> list[int]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if token in " ".join(proc.info.get("cmdline") or []):
            found.append(proc.pid)
    return found


@pytest.mark.parametrize("level", LEVELS)
def test_fork_bomb_is_stopped_and_leaves_nothing(level: str) -> None:
    token = f"evoarena-bomb-{uuid.uuid4().hex}"
    limits = SandboxLimits(wall_s=30.0, max_processes=32)
    res = run(level, FORK_BOMB.format(token=token), limits=limits)
    assert res.limit == "processes", (res.limit, res.stderr[-500:])
    assert res.returncode is None and not res.ok() and not res.timed_out
    assert res.wall_s < 15.0  # the guard, not the wall clock, ended it
    assert res.killed_for() == "killed: it started more processes than the sandbox allows"
    assert _procs_with(token) == []


@pytest.mark.parametrize("level", LEVELS)
def test_disk_flood_is_stopped_and_removed(level: str) -> None:
    code = """
import os
block = os.urandom(1 << 20)
for i in range(64):  # 64 files of 8 MiB: 512 MiB, each file under RLIMIT_FSIZE
    with open(f"f{i}", "wb") as fh:
        for _ in range(8):
            fh.write(block)
            os.fsync(fh.fileno())  # at disk speed, not the page cache's: seconds, many polls, even on a loaded machine
print("all written", os.getcwd(), flush=True)
"""
    res = run(level, code, limits=SandboxLimits(wall_s=60.0, cpu_s=60, disk_mb=32))
    assert res.limit == "disk", (res.limit, res.stderr[-500:])
    assert "all written" not in res.stdout and not res.ok()
    assert res.killed_for() == "killed: it wrote more than the sandbox's disk quota"


@pytest.mark.parametrize("level", LEVELS)
def test_writing_past_the_quota_between_two_polls_still_breaches(level: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guard, "DISK_PERIOD_S", 3600.0)  # one poll, at the start: the program exits before the next
    code = ("import os, time\ntime.sleep(0.5)  # the one poll comes first\n"
            "open('big.bin', 'wb').write(os.urandom(12 << 20))\nprint('written', flush=True)")
    res = run(level, code, limits=SandboxLimits(wall_s=60.0, cpu_s=60, disk_mb=8))
    assert "written" in res.stdout  # it did finish: only the scan at its exit can see what it wrote
    assert res.limit == "disk" and res.returncode is None and not res.ok()
    assert res.killed_for() == "killed: it wrote more than the sandbox's disk quota"


@pytest.mark.parametrize("level", LEVELS)
def test_empty_file_flood_counts_against_the_quota(level: str) -> None:
    code = """
import os
for i in range(100_000):
    open(f"e{i}", "w").close()
print("all created", flush=True)
"""
    res = run(level, code, limits=SandboxLimits(wall_s=60.0, cpu_s=60, disk_mb=8))
    assert res.limit == "disk", (res.limit, res.stderr[-500:])
    assert "all created" not in res.stdout


@pytest.mark.parametrize("level", LEVELS)
def test_within_quota_runs_normally(level: str) -> None:
    code = "open('data.bin', 'wb').write(os.urandom(4 << 20))\nprint('ok')"
    res = run(level, "import os\n" + code, limits=SandboxLimits(disk_mb=16, max_processes=4))
    assert res.ok() and res.limit is None and res.stdout == "ok\n", res.stderr


@pytest.mark.parametrize("level", RLIMITED)
def test_an_8_gib_allocation_fails_inside(level: str) -> None:
    res = run(level, "x = bytearray(8 * 1024 ** 3)\nprint('allocated')", limits=SandboxLimits(memory_mb=512))
    assert "MemoryError" in res.stderr and "allocated" not in res.stdout and not res.ok()


@pytest.mark.parametrize("level", LEVELS)
def test_200_mb_of_output_is_capped(level: str) -> None:
    code = "import sys\nchunk = 'y' * (1 << 20)\nfor _ in range(200):\n    sys.stdout.write(chunk)\nprint('end')"
    res = run(level, code, limits=SandboxLimits(wall_s=60.0, cpu_s=60, output_bytes=10_000))
    assert res.truncated and len(res.stdout) == 10_000 and res.ok()


def test_disk_usage_counts_allocation_and_entries(tmp_path: os.PathLike[str]) -> None:
    root = str(tmp_path)
    with open(os.path.join(root, "big"), "wb") as fh:
        fh.write(os.urandom(1 << 20))
    with open(os.path.join(root, "sparse"), "wb") as fh:
        fh.truncate(1 << 30)  # a 1 GiB hole allocates nothing
    os.mkdir(os.path.join(root, "d"))
    for i in range(10):
        open(os.path.join(root, "d", f"e{i}"), "w").close()
    os.symlink("/", os.path.join(root, "link"))  # counted as an entry, never followed
    used = disk_usage(root)
    assert (1 << 20) + 12 * MIN_ENTRY_BYTES <= used < (1 << 20) + 64 * MIN_ENTRY_BYTES
    assert disk_usage(root, stop_at=1000) < used
