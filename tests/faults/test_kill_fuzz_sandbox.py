"""The kill fuzz over a benchmark that grades in the sandbox (issue 12): a scripted CLR run is SIGKILLed 20 times, each
time while (or just after) one of its sandboxed programs runs, then resumed. It ends with the uninterrupted run's
science, no sandboxed program outlives the run that started it (the launcher's death signal), and no scratch
directory is left in the temp dir (the next run sweeps what a killed one left)."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import yaml
from test_resume import summary

from evoarena.sandbox.scratch import SCRATCH_PREFIX

KILLS = 20
SPEC = {
    "name": "kill-fuzz-sandbox",
    "benchmark": {"name": "clr", "params": {"seed": 0, "chains": 6, "layers": 2}},
    "methods": [{"name": "frozen"}, {"name": "reflexion", "params": {"max_trials": 1}}],
    "models": {"scripted": {"backend": "scripted", "model": "clr-student"}},
    "roles": {"solver": "scripted", "reflector": "scripted"},
    "seeds": [0],
    "protocol": {"workers": 1},
}


def _start(spec: Path, run_dir: Path, cache: Path, tmp: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "EVOARENA_CACHE_DIR": str(cache), "TMPDIR": str(tmp)}
    return subprocess.Popen([sys.executable, "-m", "evoarena.cli", "run", str(spec), "--run-dir", str(run_dir),
                             "--no-probe", "--json"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _scratch(tmp: Path, pid: int | None = None) -> list[Path]:
    """The programs' scratch dirs: in the temp dir for a cold run, inside the warm worker's root for a warm one."""
    prefix = SCRATCH_PREFIX if pid is None else f"{SCRATCH_PREFIX}{pid}-"
    found = []
    for path in _owned(tmp, prefix):
        if "-warm-" in path.name:
            with contextlib.suppress(OSError):  # removed meanwhile
                found += [p for p in path.iterdir() if p.name.startswith(SCRATCH_PREFIX)]
        else:
            found.append(path)
    return found


def _owned(tmp: Path, prefix: str = SCRATCH_PREFIX) -> list[Path]:
    """Everything the sandbox made in the temp dir: scratch dirs and warm workers' roots."""
    return [p for p in tmp.iterdir() if p.name.startswith(prefix)]


def _alive(pids: set[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.Error:
            pass
    return out


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
@pytest.mark.timeout(600)
def test_kills_mid_sandbox_resume_clean(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    clean = _start(spec, tmp_path / "clean", tmp_path / "cache-clean", tmp)
    assert clean.wait(timeout=240) == 0, clean.stderr.read() if clean.stderr else ""
    assert _owned(tmp) == []

    rng = random.Random(20261206)
    run_dir, cache = tmp_path / "killed", tmp_path / "cache-killed"
    kills = mid_sandbox = 0
    left_by_kills: set[str] = set()
    for _ in range(KILLS):
        proc = _start(spec, run_dir, cache, tmp)
        skip = rng.randrange(0, 3)  # let a few sandbox runs pass first, so the kills spread over the run
        seen: set[str] = set()
        children: set[int] = set()
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            children |= {c.pid for c in psutil.Process(proc.pid).children(recursive=True)}
            seen |= {p.name for p in _scratch(tmp, proc.pid)}
            if len(seen) > skip:
                time.sleep(rng.uniform(0, 0.05))  # sandbox runs take ~60–90 ms: most kills land inside one
                break
            time.sleep(0.002)
        if proc.poll() is not None:
            break  # the run finished before this kill point
        children |= {c.pid for c in psutil.Process(proc.pid).children(recursive=True)}
        mid_sandbox += bool(_scratch(tmp, proc.pid))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
        left_by_kills |= {p.name for p in _scratch(tmp, proc.pid)}
        deadline = time.monotonic() + 5  # the launcher's death signal, then its sweep of the program's tree
        while _alive(children) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _alive(children) == [], "a sandboxed program outlived the killed run"
    finished = _start(spec, run_dir, cache, tmp)
    assert finished.wait(timeout=240) == 0, finished.stderr.read() if finished.stderr else ""
    assert kills >= KILLS - 4 and mid_sandbox >= KILLS // 2, (kills, mid_sandbox)
    assert left_by_kills, "no kill left a scratch dir behind: the sweep was not exercised"
    assert _owned(tmp) == []  # swept by the runs that came after (and a finished run's worker root removed at exit)
    assert summary(run_dir) == summary(tmp_path / "clean")
