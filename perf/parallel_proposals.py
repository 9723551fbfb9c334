"""Performance benchmark: methods' parallel proposals against a remote-like endpoint.

GEPA at 1 x 1 and at 2 x 2 proposals per iteration (`parents_per_iteration`, `mutations_per_parent`) and TF-GRPO
(its group's summaries in one batch) run on small arithmetic against the OpenAI-compatible stub of
perf/stub_endpoint.py (every call answered after `--latency` by a scripted policy), with an empty response cache,
at concurrency 1 and N. The two levels alternate, `--repeats` times each; reported per condition: the median wall
time at each level, the speed-up (wall at 1 / wall at N: median and range over the pairs), the calls, the stub's
peak in flight and, for GEPA, proposals evaluated per second. Only ratios measured in this run mean anything on a
shared machine.

Usage: python perf/parallel_proposals.py [--latency 0.05] [--n 8] [--repeats 3] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stub_endpoint import serve

from evoarena.models import ResponseCache
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import ExperimentSpec, parse_spec

ROOT = Path(__file__).resolve().parent.parent
CONDITIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "gepa 1x1": ("arith-student", {"name": "gepa"}),
    "gepa 2x2": ("arith-student", {"name": "gepa", "params": {"parents_per_iteration": 2,
                                                             "mutations_per_parent": 2}}),
    "tf_grpo G=4": ("arith-mixed-groups", {"name": "tf_grpo", "params": {"group_size": 4}}),
}


def spec(url: str, policy: str, method: dict[str, Any], n_train: int) -> ExperimentSpec:
    model = {"backend": "openai", "model": policy, "base_url": url, "concurrency": 64, "max_retries": 0,
             "timeout_s": 30}
    return parse_spec({
        "name": "parallel-proposals",
        "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": n_train, "n_val": 4, "n_test": 4,
                                                  "families": ["small_sum", "add", "sub", "mul"]}},
        "methods": [method], "models": {"stub": model},
        "roles": {r: "stub" for r in ("solver", "proposer", "summarizer", "critic", "updater")}})


def measure(make: Callable[[str], ExperimentSpec], latency: float, n: int, tmp: Path) -> dict[str, float]:
    """Wall seconds, calls, the stub's peak in flight and evaluated GEPA proposals of one fresh run at concurrency n."""
    run_dir = Path(tempfile.mkdtemp(dir=tmp))
    with serve(latency) as stub:
        start = time.perf_counter()
        run_experiment(make(stub.url), run_dir / "run", cache=ResponseCache(run_dir / "cache.sqlite"), probe=False,
                       concurrency=n)
        seconds = time.perf_counter() - start
    with sqlite3.connect(run_dir / "run" / "run.sqlite") as conn:
        calls = conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
        proposals = conn.execute("SELECT COUNT(*) FROM events WHERE kind = 'gepa_iteration' "
                                 "AND payload LIKE '%\"after\"%'").fetchone()[0]
    return {"s": seconds, "calls": calls, "peak": stub.peak, "proposals": proposals}


def machine() -> str:
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    return (f"{platform.processor() or platform.machine()}, nproc {os.cpu_count()}, load average "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}, commit {commit}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="2 train tasks, 1 repeat")
    args = ap.parse_args()
    repeats, n_train = (1, 2) if args.smoke else (args.repeats, 6)
    print(f"machine: {machine()}")
    print(f"stub latency {args.latency * 1000:.0f} ms; concurrency 1 vs {args.n}; {repeats} repeat(s), alternating")
    print("| condition | calls | wall at 1 | wall at N | speed-up (median, range) | peak in flight "
          "| proposals/s at N |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (policy, method) in CONDITIONS.items():
            def make(url: str, policy: str = policy, method: dict[str, Any] = method) -> ExperimentSpec:
                return spec(url, policy, method, n_train)

            measure(make, args.latency, args.n, Path(tmp))  # warm-up (imports, first-run costs), not counted
            pairs = []
            for _ in range(repeats):
                one = measure(make, args.latency, 1, Path(tmp))
                many = measure(make, args.latency, args.n, Path(tmp))
                pairs.append((one, many))
            ratios = [a["s"] / b["s"] for a, b in pairs]
            walls1 = statistics.median(a["s"] for a, _ in pairs)
            wallsn = statistics.median(b["s"] for _, b in pairs)
            last = pairs[-1][1]
            rate = f"{last['proposals'] / wallsn:.2f}" if last["proposals"] else "—"
            print(f"| {name} | {last['calls']} | {walls1:.2f} s | {wallsn:.2f} s | {statistics.median(ratios):.2f}× "
                  f"({min(ratios):.2f}–{max(ratios):.2f}) | {last['peak']} | {rate} |")


if __name__ == "__main__":
    main()
