"""Performance benchmark: evoarena's fixed cost per graded attempt, next to GEPA's and DSPy's on the same tasks.

evoarena runs in this process on the scripted zero-latency model with everything a real run has (spec check, the
run store, the ledger with its texts, the response cache, units and harness versions, the report): `frozen` grading
N arithmetic tasks (what DSPy's `Evaluate` does) and the `gepa` method with a budget of B graded attempts (what
GEPA's `optimize()` does with `max_metric_calls=B`). GEPA and DSPy run the same tasks on instant fake models in
their own virtualenv (`make bench-venv`; perf/compare_frameworks.py), timed in the same invocation.
Also arith-basics end to end (`evoarena run recipes/arith-basics.yaml --model scripted`, a fresh process).

Usage: python perf/overhead.py [--tasks 400] [--budget 400] [--repeat 3] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from evoarena.models import ResponseCache
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import parse_spec

ROOT = Path(__file__).resolve().parent.parent
COMPARE_PY = ROOT / "perf" / ".venv-compare" / "bin" / "python"
SCRIPTED = {"scripted": {"backend": "scripted", "model": "arith-student"}}


def frozen_spec(n: int) -> dict[str, Any]:
    return {"name": "overhead-frozen", "benchmark": {"name": "arith", "params": {
        "seed": 0, "n_train": 1, "n_val": 0, "n_test": n}}, "methods": [{"name": "frozen"}],
        "models": SCRIPTED, "roles": {"solver": "scripted"}, "seeds": [0],
        "protocol": {"workers": 1}}  # one at a time, as DSPy's Evaluate(num_threads=1): threads only cost here


def gepa_spec(budget: int) -> dict[str, Any]:
    return {"name": "overhead-gepa", "benchmark": {"name": "arith", "params": {
        "seed": 0, "n_train": 100, "n_val": 20, "n_test": 1}}, "methods": [{"name": "gepa"}],
        "models": SCRIPTED, "roles": {"solver": "scripted", "proposer": "scripted"}, "seeds": [0],
        "budget": {"max_attempts": budget}, "protocol": {"epochs": 100, "workers": 1}}


def time_run(spec: dict[str, Any], tmp: Path) -> tuple[float, int]:
    """Seconds for one fresh run (new run dir, empty response cache) and the graded attempts it made."""
    run_dir, cache = tmp / "run", tmp / "cache"
    shutil.rmtree(run_dir, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    start = time.perf_counter()
    run_experiment(parse_spec(spec), run_dir, cache=ResponseCache(cache / "responses.sqlite"), probe=False)
    seconds = time.perf_counter() - start
    with sqlite3.connect(run_dir / "run.sqlite") as conn:
        graded = conn.execute("SELECT COUNT(*) FROM attempts WHERE score IS NOT NULL").fetchone()[0]
    return seconds, int(graded)


def arith_basics_seconds(tmp: Path) -> float:
    run_dir = tmp / "arith-basics"
    shutil.rmtree(run_dir, ignore_errors=True)
    env = {**os.environ, "EVOARENA_CACHE_DIR": str(tmp / "qs-cache")}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "evoarena.cli", "run", str(ROOT / "recipes" / "arith-basics.yaml"),
                    "--model", "scripted", "--run-dir", str(run_dir)], check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def frameworks(n: int, budget: int, tmp: Path) -> dict[str, Any] | None:
    """GEPA's and DSPy's seconds per metric call on the same arithmetic tasks, or None without their venv."""
    if not COMPARE_PY.exists():
        return None
    from evoarena.benchmarks.arith.benchmark import ArithBenchmark

    tasks = [t for t in ArithBenchmark(seed=0, n_train=n, n_val=0, n_test=1).build() if t.split == "train"]
    src, out = tmp / "tasks.json", tmp / "frameworks.json"
    src.write_text(json.dumps({"budget": budget, "tasks": [
        {"id": t.id, "question": t.prompt, "answer": t.reference} for t in tasks]}))
    subprocess.run([str(COMPARE_PY), str(ROOT / "perf" / "compare_frameworks.py"), str(src), str(out)],
                   check=True, capture_output=True)
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=400)
    ap.add_argument("--budget", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="small sizes, one repeat (a 10-second check)")
    args = ap.parse_args()
    if args.smoke:
        args.tasks, args.budget, args.repeat = 40, 40, 1
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        time_run(frozen_spec(4), tmp)  # warm: imports and first-use setup are not per-attempt costs
        rows: list[tuple[str, float]] = []
        for label, spec in (("evoarena frozen (test grading)", frozen_spec(args.tasks)),
                            ("evoarena gepa (budgeted search)", gepa_spec(args.budget))):
            per = [s / max(1, g) for s, g in (time_run(spec, tmp) for _ in range(args.repeat))]
            rows.append((label, statistics.median(per)))
        other = frameworks(args.tasks, args.budget, tmp)
        if other is not None:
            rows.append((f"GEPA {other['gepa']['version']} optimize()", other["gepa"]["s_per_metric_call"]))
            rows.append((f"DSPy {other['dspy']['version']} Evaluate", other["dspy"]["s_per_metric_call"]))
        quick = statistics.median(arith_basics_seconds(tmp) for _ in range(args.repeat))
    base = dict(rows)
    print(f"{'per graded attempt':<36}{'ms':>9}")
    for label, s in rows:
        print(f"{label:<36}{s * 1e3:>9.3f}")
    if other is not None:
        print(f"ratio evoarena gepa / GEPA optimize: {base['evoarena gepa (budgeted search)'] / rows[2][1]:.2f}"
              f"   evoarena frozen / DSPy Evaluate: {base['evoarena frozen (test grading)'] / rows[3][1]:.2f}")
    else:
        print("(GEPA and DSPy not measured: `make bench-venv` makes perf/.venv-compare)")
    print(f"scripted arith-basics end to end: {quick:.2f} s (a fresh process; target <= 1 s)")


if __name__ == "__main__":
    main()
