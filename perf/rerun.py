"""Performance benchmark: a fully cached rerun. arith-basics runs against an OpenAI-compatible stub with 200 ms per
call (perf/stub_endpoint.py) into a fresh run directory; then again into another fresh run directory with the
same response cache. Target: the rerun makes 0 calls to the endpoint and takes <= 5% of the first run's wall time.

Usage: python perf/rerun.py [--latency 0.2] [--concurrency 1] [--smoke]
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path

from concurrency import arith_basics
from stub_endpoint import serve

from evoarena.models import ResponseCache
from evoarena.protocol.run.runner import run_experiment


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--smoke", action="store_true", help="latency 20 ms")
    args = ap.parse_args()
    if args.smoke:
        args.latency = 0.02
    with tempfile.TemporaryDirectory() as name, serve(args.latency) as stub:
        tmp = Path(name)
        walls, requests = [], []
        for run in ("first", "rerun"):
            before = stub.requests
            start = time.perf_counter()
            run_experiment(arith_basics(stub.url), tmp / run, cache=ResponseCache(tmp / "cache.sqlite"), probe=False,
                           concurrency=args.concurrency)
            walls.append(time.perf_counter() - start)
            requests.append(stub.requests - before)
        with sqlite3.connect(tmp / "rerun" / "run.sqlite") as conn:
            ledger, cached = conn.execute("SELECT COUNT(*), SUM(cached) FROM calls").fetchone()
    print(f"first run: {walls[0]:.2f} s, {requests[0]} requests to the endpoint")
    print(f"rerun:     {walls[1]:.2f} s, {requests[1]} requests, {cached}/{ledger} ledger rows cached")
    print(f"rerun / first: {walls[1] / walls[0]:.3f} (target <= 0.05)")


if __name__ == "__main__":
    main()
