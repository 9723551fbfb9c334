"""A SIGKILLed host takes its sandboxed programs with it (issue 12, kill fuzz): the rlimits launcher gets SIGTERM
when its parent dies (PR_SET_PDEATHSIG) and kills the program's whole tree, so a killed run leaves no program
running without the wall-clock limit only the host enforced. At `timeout-only` (Windows) there is no launcher."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import psutil
import pytest

from evoarena.sandbox import isolation
from evoarena.sandbox.worker import warm_supported

# every level cold, and bwrap through the warm worker (whose launcher, bwrap and server must die with the host too)
RLIMITED = [*(lvl for lvl in isolation.detect().available if lvl != "timeout-only"),
            *(["bwrap:warm"] if warm_supported() else [])]

HOST = textwrap.dedent("""
    import os, sys
    from evoarena.sandbox import SandboxLimits
    from evoarena.sandbox.runner import run_with
    code = (f"import subprocess, sys, time\\n"
            f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', {os.environ['ORPHAN_TOKEN']!r}],"
            f" start_new_session=True)\\n"
            f"print('running', flush=True)\\n"
            f"time.sleep(120)\\n")
    level, _, warm = sys.argv[1].partition(":")
    run_with(level, code, limits=SandboxLimits(wall_s=120.0, cpu_s=120), warm=bool(warm) if level == "bwrap" else None)
""")


def _procs_with(token: str) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["cmdline"]) if token in (p.info.get("cmdline") or [])]


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:  # gone between the listing and the look
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux")
@pytest.mark.parametrize("level", RLIMITED)
def test_sandboxed_program_dies_with_a_killed_host(level: str) -> None:
    token = f"evoarena-orphan-{uuid.uuid4().hex}"
    host = subprocess.Popen([sys.executable, "-c", HOST, level], env={**os.environ, "ORPHAN_TOKEN": token})
    try:
        deadline = time.monotonic() + 30
        while not _procs_with(token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _procs_with(token), "the sandboxed program never started"
        os.kill(host.pid, signal.SIGKILL)
        host.wait()
        deadline = time.monotonic() + 5
        while (alive := [p for p in _procs_with(token) if _running(p)]) and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        assert alive == [], "a sandboxed program outlived its killed host"
    finally:
        for proc in _procs_with(token):
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        if host.poll() is None:
            host.kill()
