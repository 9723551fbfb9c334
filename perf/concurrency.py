"""Performance benchmark: throughput against a remote-like endpoint as the run's concurrency grows.

An OpenAI-compatible stub on 127.0.0.1 answers every call after 200 ms with the scripted policy
(perf/stub_endpoint.py); evoarena runs through its `openai` backend, with an empty response cache each time, at
concurrency N in {1, 4, 8, 16, 32}. Reported: calls per second, the speed-up over N = 1 measured in the same run and
its share of N (target >= 0.8 N), and the critical path — the longest chain of dependent calls (a CLR episode's
calls; an arith-basics cell's practice steps, which build on each other, plus one wave per evaluation) times the
latency — with wall time over it (target <= 1.1 on CLR). Each speed-up is given twice: for whole runs (the
headline: the report and the run's other fixed work included) and for the cells alone (`cells /N`: the time from the
first cell's start to the last one's end, over N). Where the critical path is most of the N = 1 wall time
(arith-basics' practice is sequential by nature), no concurrency can give N times the throughput.

With `--executor ray` the same runs go through the Ray executor (`executor: {kind: ray, address: local}`: a Ray
instance on this machine, each cell a Ray task whose own scheduler runs at N, so up to N calls in flight per cell).

Usage: python perf/concurrency.py [--latency 0.2] [--levels 1,4,8,16,32] [--chains 8] [--recipes arith_basics,clr]
       [--executor local|ray] [--smoke]
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stub_endpoint import serve

from evoarena.models import ResponseCache
from evoarena.protocol.run import runner
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import ExecutorSpec, load_spec, parse_spec

ROOT = Path(__file__).resolve().parent.parent


def arith_basics(url: str) -> Any:
    spec = load_spec(ROOT / "recipes" / "arith-basics.yaml")
    data = spec.model_dump(mode="json")
    data["models"] = {"stub": {"backend": "openai", "model": "arith-student", "base_url": url, "concurrency": 64,
                               "max_retries": 0, "timeout_s": 30}}
    data["roles"] = {role: "stub" for role in data["roles"]}
    return parse_spec(data)


def clr(url: str, chains: int) -> Any:
    return parse_spec({
        "name": "concurrency-clr", "benchmark": {"name": "clr", "params": {"chains": chains, "layers": 2}},
        "methods": [{"name": "frozen"}, {"name": "history"}],
        "models": {"stub": {"backend": "openai", "model": "clr-student", "base_url": url, "concurrency": 64,
                            "max_retries": 0, "timeout_s": 30}},
        "roles": {"solver": "stub"}})


@dataclass
class Timed:
    """Seconds spent in one function of the run, summed over its calls (wrapped for the run's duration)."""

    seconds: float = 0.0

    @contextmanager
    def around(self, module: Any, name: str) -> Iterator[None]:
        inner = getattr(module, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        setattr(module, name, timed)
        try:
            yield
        finally:
            setattr(module, name, inner)


def measure(make: Any, latency: float, n: int, tmp: Path, executor: str = "local") -> tuple[float, int, int, int,
                                                                                                 float]:
    """(seconds, calls, the stub's peak in flight, the longest episode's calls, seconds of the cells alone) of one
    fresh run at concurrency n. The cells alone: the time from the first cell's start to the last cell's end, i.e.
    the whole run without its spec check, benchmark build and end-of-run report."""
    cells = Timed()
    with serve(latency) as stub, cells.around(runner, "_run_all"):
        run_dir = tmp / f"run-{make.__name__}-{n}"
        spec = make(stub.url)
        if executor == "ray":
            spec = spec.model_copy(update={"executor": ExecutorSpec(kind="ray", address="local")})
        start = time.perf_counter()
        run_experiment(spec, run_dir, cache=ResponseCache(tmp / f"cache-{make.__name__}-{n}.sqlite"),
                       probe=False, concurrency=n)
        seconds = time.perf_counter() - start
    with sqlite3.connect(run_dir / "run.sqlite") as conn:
        rows = conn.execute("SELECT cell, phase, unit FROM calls WHERE phase != 'probe'").fetchall()
    return seconds, len(rows), stub.peak, critical_calls(rows), cells.seconds


def critical_calls(rows: list[tuple[str, str, str]]) -> int:
    """The longest chain of dependent calls, over cells: a curriculum episode's calls (its steps and stage tests, one
    after another); otherwise a cell's practice calls (each step builds on the last) plus one call per evaluation
    unit (a unit's tasks are independent: one wave)."""
    episodes = Counter((cell, str(unit).removeprefix("test/").split("/L")[0]) for cell, _, unit in rows
                       if unit and "/L" in str(unit))
    if episodes:
        return max(episodes.values())
    practice = Counter(cell for cell, phase, _ in rows if phase in ("practice", "rollout"))
    waves = Counter(cell for cell, unit in {(c, u) for c, ph, u in rows if ph in ("select", "test")})
    return max((practice[c] + waves[c] for c in set(practice) | set(waves)), default=0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--levels", default="1,4,8,16,32")
    ap.add_argument("--chains", type=int, default=8)
    ap.add_argument("--executor", choices=("local", "ray"), default="local")
    ap.add_argument("--recipes", default="arith_basics,clr", help="which of arith_basics, clr to run")
    ap.add_argument("--smoke", action="store_true", help="latency 20 ms, levels 1 and 4, 2 chains")
    args = ap.parse_args()
    if args.smoke:
        args.latency, args.levels, args.chains = 0.02, "1,4", 2
    levels = [int(x) for x in args.levels.split(",")]

    def clr_recipe(url: str) -> Any:
        return clr(url, args.chains)

    clr_recipe.__name__ = "clr"
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        for make in (m for m in (arith_basics, clr_recipe) if m.__name__ in args.recipes.split(",")):
            print(f"\n{make.__name__}: {args.latency * 1e3:.0f} ms per call, {args.executor} executor")
            print("(speed-up: whole runs, the report included; cells: the cells alone, without the spec check,"
                  " benchmark build and end-of-run report)")
            print(f"{'N':>4}{'wall s':>9}{'calls':>7}{'calls/s':>9}{'speed-up':>10}{'/ N':>7}{'peak':>6}"
                  f"{'crit. s':>9}{'wall/crit':>11}{'cells s':>9}{'cells /N':>10}")
            base = cells_base = None
            for n in levels:
                seconds, calls, peak, longest, cells = measure(make, args.latency, n, tmp, args.executor)
                rate = calls / seconds
                base = base or rate
                cells_base = cells_base or cells
                critical = longest * args.latency
                ratio = f"{seconds / critical:>11.2f}" if critical else f"{'-':>11}"
                print(f"{n:>4}{seconds:>9.2f}{calls:>7}{rate:>9.1f}{rate / base:>10.2f}{rate / base / n:>7.2f}"
                      f"{peak:>6}{critical:>9.2f}{ratio}{cells:>9.2f}{cells_base / cells / n:>10.2f}")


if __name__ == "__main__":
    main()
