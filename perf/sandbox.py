"""Performance benchmark: what one sandboxed program costs at each isolation level this machine offers, with the same
limits — a trivial program (`print(1)`) and one that imports what CLR's programs use (`json`, `collections`, `re`) —
next to a bare `python -E -s` subprocess measured in the same run, and the warm worker of issue 13 (a fork server
started once inside bubblewrap, a fresh isolated child per program; target <= 10 ms per program) with the same limits.
The worker is started (and its first program run) before the timing, as in a run, where it starts once per process.

Usage: python perf/sandbox.py [--runs 20] [--smoke]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from evoarena.sandbox import SandboxLimits
from evoarena.sandbox.isolation import detect
from evoarena.sandbox.runner import run_with
from evoarena.sandbox.worker import warm_supported

PROGRAMS = {"print(1)": "print(1)\n",
            "imports": "import json, collections, re\nprint(json.dumps(collections.Counter(re.findall('a', 'aa'))))\n"}


def per_run(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm the page cache and the interpreter's own caches
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--smoke", action="store_true", help="3 runs each")
    args = ap.parse_args()
    runs = 3 if args.smoke else args.runs
    modes = [(level, False) for level in detect().available]  # every level cold ...
    if warm_supported():
        modes.insert(0, ("bwrap", True))  # ... and the warm worker
    limits = SandboxLimits()
    names = [f"{'warm worker' if warm else level} ms" for level, warm in modes]
    print(f"{'program':<10}{'bare python ms':>16}" + "".join(f"{name:>24}" for name in names))
    for label, code in PROGRAMS.items():
        with tempfile.TemporaryDirectory() as tmp:
            main_py = Path(tmp) / "main.py"
            main_py.write_text(code)
            bare = per_run(functools.partial(subprocess.run, [sys.executable, "-E", "-s", str(main_py)],
                                             capture_output=True, check=True), runs)
        cells = []
        for level, warm in modes:
            cost = per_run(functools.partial(run_with, level, code, limits=limits, warm=warm), runs)
            cells.append(f"{cost * 1e3:>10.1f} ({cost / bare:>4.1f}x bare)")
        print(f"{label:<10}{bare * 1e3:>16.1f}" + "".join(f"{c:>24}" for c in cells))


if __name__ == "__main__":
    main()
