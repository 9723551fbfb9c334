"""A run killed with SIGKILL and started again with the same command ends as if never interrupted."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from evoarena.store import RunStore

HERE = Path(__file__).parent

SPEC = {
    "name": "resume",
    "benchmark": {"name": "arith", "params": {"seed": 1, "n_train": 8, "n_val": 5, "n_test": 10}},
    "methods": [{"name": "frozen"}, {"name": "reflexion"}, {"name": "bootstrap_fewshot"}],
    "models": {"slow": {"backend": "scripted", "model": "slow_policy:slow_student"}},
    "roles": {"solver": "slow", "reflector": "slow"},
    "seeds": [0, 1],
}


def run_cli(spec: Path, run_dir: Path, cache: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(HERE), "EVOARENA_CACHE_DIR": str(cache)}
    return subprocess.Popen([sys.executable, "-m", "evoarena.cli", "run", str(spec), "--run-dir", str(run_dir),
                             "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def units(run_dir: Path) -> int:
    try:
        with sqlite3.connect(run_dir / "run.sqlite", timeout=1) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM units").fetchone()[0])
    except sqlite3.Error:
        return 0


def summary(run_dir: Path) -> dict[str, object]:
    store = RunStore(run_dir)
    results = json.loads((run_dir / "results.json").read_text())
    return {
        "conditions": results["conditions"],
        "units": store.query("SELECT cell, key, result FROM units ORDER BY cell, key"),
        "attempts": store.query("SELECT cell, phase, unit_key, task_id, version_id, answer, score FROM attempts"
                                " ORDER BY cell, unit_key, task_id, id"),
        "versions": store.query("SELECT cell, id, parent_ids FROM harness_versions ORDER BY cell, id"),
    }


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_sigkill_then_resume_gives_identical_results(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))

    clean = run_cli(spec, tmp_path / "clean", tmp_path / "cache-clean")
    assert clean.wait(timeout=240) == 0, clean.stderr.read() if clean.stderr else ""

    killed_dir = tmp_path / "killed"
    proc = run_cli(spec, killed_dir, tmp_path / "cache-killed")
    deadline = time.monotonic() + 120
    while units(killed_dir) < 10 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = units(killed_dir)
    assert 0 < done_before < units(tmp_path / "clean")

    resumed = run_cli(spec, killed_dir, tmp_path / "cache-killed")
    assert resumed.wait(timeout=240) == 0, resumed.stderr.read() if resumed.stderr else ""
    assert summary(killed_dir) == summary(tmp_path / "clean")
