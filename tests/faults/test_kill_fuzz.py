"""SIGKILL at 20 seeded points of a run — mid-call, between units, while the report is written — each followed by
the same command again: the run ends with the uninterrupted run's science, every request the endpoint received is in
the ledger, and no process of the run is left behind."""

from __future__ import annotations

import json
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
from faulty_endpoint import Endpoint, model_spec, serve
from test_resume import summary

from evoarena.store import RunStore

KILLS = 20
SPEC = {
    "name": "kill-fuzz",
    "benchmark": {"name": "arith", "params": {"seed": 1, "n_train": 8, "n_val": 5, "n_test": 10}},
    "methods": [{"name": "frozen"}, {"name": "reflexion"}, {"name": "bootstrap_fewshot"}],
    "roles": {"solver": "ep", "reflector": "ep"},
    "seeds": [0, 1],
}


def _start(spec: Path, run_dir: Path, cache: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "EVOARENA_CACHE_DIR": str(cache)}
    return subprocess.Popen([sys.executable, "-m", "evoarena.cli", "run", str(spec), "--run-dir", str(run_dir),
                             "--no-probe", "--json"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _spec(tmp_path: Path, endpoint: Endpoint) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump({**SPEC, "models": {"ep": model_spec(endpoint.url, max_retries=0)}}))
    return path


def _ledger(run_dir: Path) -> tuple[int, int]:
    """(completed rows that were not cache hits, all rows that were not cache hits)."""
    rows = RunStore(run_dir).query("SELECT error FROM calls WHERE cached = 0")
    return sum(r["error"] is None for r in rows), len(rows)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
@pytest.mark.timeout(600)
def test_twenty_kills_resume_to_the_uninterrupted_run(tmp_path: Path) -> None:
    with serve(delay_s=0.01) as clean_ep:
        (tmp_path / "c").mkdir()
        spec = _spec(tmp_path / "c", clean_ep)
        assert _start(spec, tmp_path / "clean", tmp_path / "cache-clean").wait(timeout=240) == 0
        total = clean_ep.requests
    rng = random.Random(20261204)
    points = sorted(rng.sample(range(1, total), KILLS - 1))  # by requests the endpoint has received
    with serve(delay_s=0.01) as ep:
        spec = _spec(tmp_path, ep)
        run_dir, cache = tmp_path / "killed", tmp_path / "cache-killed"
        kills = 0
        for point in [*points, None]:  # None: once every request is in, kill while the run ends (test, report)
            proc = _start(spec, run_dir, cache)
            children: set[int] = set()
            deadline = time.monotonic() + 120
            while proc.poll() is None and time.monotonic() < deadline:
                children |= {c.pid for c in psutil.Process(proc.pid).children(recursive=True)}
                if point is not None and ep.requests >= point:
                    time.sleep(rng.uniform(0, 0.012))  # often inside a call the endpoint is answering
                    break
                if point is None and ep.requests >= total and (run_dir / "run.sqlite").exists():
                    time.sleep(rng.uniform(0, 0.3))
                    break
                time.sleep(0.002)
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                kills += 1
            proc.wait()
            assert not [p for p in children if psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"]
        finished = _start(spec, run_dir, cache)
        assert finished.wait(timeout=240) == 0, finished.stderr.read() if finished.stderr else ""
        requests = ep.requests
    assert kills >= KILLS - 2  # a point may fall where a restart already finished the requests it waited for
    assert summary(run_dir) == summary(tmp_path / "clean")
    completed, rows = _ledger(run_dir)
    assert completed <= requests <= rows  # every request that reached the endpoint has its row
    assert json.loads((run_dir / "results.json").read_text())["conditions"] == json.loads(
        (tmp_path / "clean" / "results.json").read_text())["conditions"]
