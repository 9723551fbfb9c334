"""A double-forked `setsid` daemon does not outlive its sandboxed program (issue 12, item 4): the intermediate child
exits at once, so the daemon is re-parented before the host's process-tree snapshot can see it. Checked at every
isolation level this machine offers, `timeout-only` included, after a normal exit and after a time-out."""

from __future__ import annotations

import time
import uuid

import psutil
import pytest
from sandbox_modes import WARM, run

from evoarena.sandbox import SandboxLimits, isolation

# every level cold (at `timeout-only` no launcher reaps: the daemon is found by the run's mark in its environment),
# and bwrap through the warm worker
LEVELS = [*isolation.detect().available, *WARM]


DAEMON = """
import os, subprocess, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:  # the daemon: a fresh session, parent gone, running a process the host can find by token
        subprocess.Popen([sys.executable, "-c", "import time\\ntime.sleep(60)", {token!r}], start_new_session=True)
        time.sleep(60)
    os._exit(0)
time.sleep(0.5)
print("spawned", flush=True)
{tail}
"""


def _alive(token: str, wait_s: float = 2.0) -> list[psutil.Process]:
    deadline = time.monotonic() + wait_s
    while True:
        found = []
        for proc in psutil.process_iter(["cmdline", "status"]):
            if token in (proc.info.get("cmdline") or []) and proc.info.get("status") != psutil.STATUS_ZOMBIE:
                found.append(proc)
        if not found or time.monotonic() > deadline:
            for proc in found:  # never leave one behind for the next test, whatever the verdict
                proc.kill()
            return found
        time.sleep(0.1)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("ending", ["exits", "times-out"])
def test_a_double_forked_daemon_dies_with_the_program(level: str, ending: str) -> None:
    token = f"evoarena-daemon-{uuid.uuid4().hex}"
    tail = "" if ending == "exits" else "while True:\n    time.sleep(0.1)"
    res = run(level, DAEMON.format(token=token, tail=tail),  # type: ignore[arg-type]
                   limits=SandboxLimits(wall_s=3.0))
    assert "spawned" in res.stdout, res.stderr
    assert res.timed_out == (ending == "times-out")
    assert _alive(token) == []
