"""Performance benchmark: how many calls per second one evoarena process makes when the endpoint costs nothing.

The OpenAI-compatible stub (perf/stub_endpoint.py) runs in its own process with zero latency; evoarena runs through
its `openai` backend, empty response cache, no budget, at concurrency N: CLR with 32 chains × 2 conditions (64
episodes, each a chain of dependent calls with sandboxed gradings) and `frozen` grading many arithmetic tasks (the
test phase: independent calls, no sandbox). Reported per workload: ledger rows, calls/s (median and spread over the
repeats, interleaved, after one untimed small run of each). `--bare` adds the `openai` backend alone, called from 1
and 16 threads with nothing recorded: what the HTTP client costs without the run around it. `--profile` writes a
cProfile of one more run of each and prints its top functions by own time (this thread's only: py-spy sees every
thread).

`--executor ray --cells K` runs the cells as Ray tasks (`executor: {kind: ray, address: local}`), each in a worker
process: what one process cannot sustain, several may.

Usage: python perf/ceiling.py [--levels 16,32] [--repeat 3] [--chains 32] [--tasks 1000] [--cells 1]
                              [--executor local|ray] [--bare] [--profile] [--smoke]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sqlite3
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from stub_endpoint import serve

from evoarena.models import ResponseCache
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import ExecutorSpec, parse_spec


def stub_model(url: str, model: str) -> dict[str, Any]:
    return {"stub": {"backend": "openai", "model": model, "base_url": url, "concurrency": 64, "max_retries": 0,
                     "timeout_s": 30}}


def clr(url: str, chains: int, tasks: int, cells: int = 1) -> Any:
    return parse_spec({
        "name": "ceiling-clr", "benchmark": {"name": "clr", "params": {"chains": chains, "layers": 2}},
        "methods": [{"name": "frozen"}, {"name": "history"}], "models": stub_model(url, "clr-student"),
        "roles": {"solver": "stub"}})


def arith(url: str, chains: int, tasks: int, cells: int = 1) -> Any:
    """`frozen` on `tasks` test tasks, in `cells` cells (seeds) of tasks/cells each: the seed is in every call, so
    no cell's call is another's cache hit."""
    return parse_spec({
        "name": "ceiling-arith", "benchmark": {"name": "arith", "params": {
            "seed": 0, "n_train": 1, "n_val": 0, "n_test": tasks // cells}}, "methods": [{"name": "frozen"}],
        "models": stub_model(url, "arith-student"), "roles": {"solver": "stub"}, "seeds": list(range(cells))})


def one_run(make: Any, url: str, n: int, tmp: Path, args: argparse.Namespace,
            profile: cProfile.Profile | None = None) -> tuple[float, int]:
    """(seconds, ledger rows) of one fresh run at concurrency n."""
    run_dir = tmp / f"run-{time.monotonic_ns()}"
    spec = make(url, args.chains, args.tasks, getattr(args, "cells", 1))
    if getattr(args, "executor", "local") == "ray":
        spec = spec.model_copy(update={"executor": ExecutorSpec(kind="ray", address="local")})
    cache = ResponseCache(tmp / f"cache-{time.monotonic_ns()}.sqlite")
    start = time.perf_counter()
    if profile is not None:
        profile.enable()
    run_experiment(spec, run_dir, cache=cache, probe=False, concurrency=n)
    if profile is not None:
        profile.disable()
    seconds = time.perf_counter() - start
    with sqlite3.connect(run_dir / "run.sqlite") as conn:
        calls = conn.execute("SELECT COUNT(*) FROM calls WHERE phase != 'probe'").fetchone()[0]
    return seconds, int(calls)


def bare(url: str, threads: int, calls: int) -> float:
    """Calls/s of the `openai` backend alone (no ledger, cache or run) from `threads` threads: the client's share."""
    from concurrent.futures import ThreadPoolExecutor

    from evoarena.models import GenParams, Message
    from evoarena.models.openai_backend import OpenAIBackend
    from evoarena.spec import ModelSpec

    backend = OpenAIBackend(ModelSpec(backend="openai", model="arith-student", base_url=url, concurrency=64))
    messages, params = [Message("user", "What is 3 + 4?")], GenParams()
    backend.complete(messages, params)
    with ThreadPoolExecutor(threads) as pool:
        start = time.perf_counter()
        list(pool.map(lambda _: backend.complete(messages, params), range(calls)))
        return calls / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--levels", default="16,32")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--chains", type=int, default=32)
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--workloads", default="clr,arith")
    ap.add_argument("--cells", type=int, default=1, help="arith: the tasks split over this many cells (seeds)")
    ap.add_argument("--executor", choices=("local", "ray"), default="local",
                    help="ray: each cell a Ray task (a local Ray instance), so cells run in several processes")
    ap.add_argument("--bare", action="store_true", help="also the backend alone at 1 and 16 threads (1000 calls)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="arith only, 100 tasks, N = 8, one repeat")
    args = ap.parse_args()
    if args.smoke:
        args.levels, args.repeat, args.workloads, args.tasks = "8", 1, "arith", 100
    levels = [int(x) for x in args.levels.split(",")]
    makers = {"clr": clr, "arith": arith}
    chosen = [makers[w] for w in args.workloads.split(",")]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"commit {commit}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, "
          f"stub latency {args.latency * 1e3:g} ms (own process), {args.executor} executor, arith cells {args.cells}")
    with tempfile.TemporaryDirectory() as name, serve(args.latency) as stub:
        tmp = Path(name)
        rates: dict[tuple[str, int], list[float]] = {}
        rows: dict[str, int] = {}
        for make in chosen:  # untimed: the first run of a process pays imports and the sandbox's start
            one_run(make, stub.url, levels[0], tmp, argparse.Namespace(chains=2, tasks=50, cells=args.cells,
                                                                       executor=args.executor))
        for _ in range(args.repeat):  # interleaved: each repeat runs every workload at every level
            for make in chosen:
                for n in levels:
                    seconds, calls = one_run(make, stub.url, n, tmp, args)
                    rates.setdefault((make.__name__, n), []).append(calls / seconds)
                    rows[make.__name__] = calls
        print(f"{'workload':>9}{'N':>4}{'calls':>7}{'calls/s median':>16}{'min':>8}{'max':>8}")
        for threads in (1, 16) if args.bare else ():
            rates[("bare", threads)] = [bare(stub.url, threads, 1000) for _ in range(args.repeat)]
            rows["bare"] = 1000
        for (workload, n), rs in rates.items():
            print(f"{workload:>9}{n:>4}{rows[workload]:>7}{statistics.median(rs):>16.1f}{min(rs):>8.1f}"
                  f"{max(rs):>8.1f}")
        if args.profile:
            for make in chosen:
                prof = cProfile.Profile()
                seconds, calls = one_run(make, stub.url, levels[-1], tmp, args, prof)
                out = tmp / f"{make.__name__}.prof"
                prof.dump_stats(out)
                print(f"\nprofile {make.__name__} N={levels[-1]}: {calls} calls in {seconds:.2f} s "
                      f"(profiled: slower); top by own time")
                pstats.Stats(str(out)).sort_stats("tottime").print_stats(25)
    print(f"load after {os.getloadavg()[0]:.2f}; stub served {stub.requests} requests, peak {stub.peak} in flight")


if __name__ == "__main__":
    main()
