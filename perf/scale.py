"""Performance benchmark: a user's task file at 1k and 10k tasks (the `files` benchmark, JSONL), frozen + reflexion on
a scripted player (instant, right on most tasks), in this process. Reported per size: wall time, time per graded
attempt, run store size, and the process's peak memory; wall time and store size should grow linearly.

Usage: python perf/scale.py [--sizes 1000,10000] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from evoarena.api import policy
from evoarena.models import GenParams, Message, ResponseCache
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import parse_spec


@policy("bench-sums")
def sums(messages: Sequence[Message], params: GenParams) -> str:
    """Adds the two numbers of "What is A + B?"; wrong by one when A + B ends in 7, until a reflection is shown."""
    text = messages[-1].content
    if text.rstrip().endswith("Reflection:"):
        return "Check the last digit."
    nums = [int(t) for t in text.replace("?", " ").split() if t.isdigit()][-2:]
    total = sum(nums) if len(nums) == 2 else 0
    taught = any("Check the last digit" in m.content for m in messages)
    return str(total + (1 if total % 10 == 7 and not taught else 0))


def write_tasks(path: Path, n: int) -> None:
    with path.open("w") as fh:
        for i in range(n):
            a, b = (i * 7919) % 1000, (i * 104729) % 1000
            fh.write(json.dumps({"id": f"t{i}", "question": f"What is {a} + {b}?", "answer": a + b}) + "\n")


def spec(path: Path) -> object:
    return parse_spec({
        "name": "scale", "benchmark": {"name": "files", "params": {
            "path": str(path), "input": "question", "answer": "answer", "id": "id", "ratio": [0.1, 0.05, 0.85],
            "seed": 0, "grader": "numeric"}},
        "methods": [{"name": "frozen"}, {"name": "reflexion"}],
        "models": {"s": {"backend": "scripted", "model": "bench-sums"}},
        "roles": {"solver": "s", "reflector": "s"}})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--smoke", action="store_true", help="200 and 400 tasks")
    args = ap.parse_args()
    sizes = [200, 400] if args.smoke else [int(x) for x in args.sizes.split(",")]
    print(f"{'tasks':>7}{'wall s':>9}{'attempts':>10}{'ms/attempt':>12}{'store MB':>10}{'peak RSS MB':>13}")
    base = None
    for n in sizes:
        with tempfile.TemporaryDirectory() as name:
            tmp = Path(name)
            write_tasks(tmp / "tasks.jsonl", n)
            start = time.perf_counter()
            run_experiment(spec(tmp / "tasks.jsonl"), tmp / "run",  # type: ignore[arg-type]
                           cache=ResponseCache(tmp / "cache.sqlite"), probe=False)
            wall = time.perf_counter() - start
            import sqlite3

            with sqlite3.connect(tmp / "run" / "run.sqlite") as conn:
                attempts = conn.execute("SELECT COUNT(*) FROM attempts").fetchone()[0]
            size = sum(p.stat().st_size for p in (tmp / "run").rglob("*") if p.is_file()) / 1e6
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        base = base or (n, wall, size)
        print(f"{n:>7}{wall:>9.2f}{attempts:>10}{1e3 * wall / attempts:>12.3f}{size:>10.1f}{peak:>13.0f}"
              f"   x{n / base[0]:.0f} tasks: wall x{wall / base[1]:.1f}, store x{size / base[2]:.1f}")


if __name__ == "__main__":
    main()
