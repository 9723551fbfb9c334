"""Performance benchmark: prompt-prefix reuse on the embedded model, a playbook-shaped study.

Three cells in flight, each with its own ~1k-token playbook as the system prompt (as ACE's or Dynamic Cheatsheet's
generator calls carry theirs), answer arith word problems on the embedded 0.5B; their calls interleave on the one
llama.cpp context. Trials alternate kept prefixes off (EVOARENA_EMBEDDED_PREFIX_MB=0's behaviour: llama-cpp-python
reuses only what the previous call shared) and on, each into a fresh run directory with an empty response cache.
Reports prompt tokens sent vs evaluated (from the ledger) and wall time, as ratios on/off in the same run.
Targets: evaluated <= 0.3 x sent, wall <= 0.5 x off.

Usage: python perf/prefix_reuse.py [--model qwen2.5-coder-0.5b-instruct] [--repeats 2] [--tests 12] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from evoarena.models import ResponseCache, embedded
from evoarena.models.prefix_cache import PrefixReuse
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import parse_spec
from evoarena.store import RunStore

TOPICS = ["apples", "coins", "marbles", "stamps", "pencils", "books", "birds", "cards", "shells", "boxes"]


def playbook(cell: int, rules: int) -> str:
    """A deterministic playbook of `rules` bullets (~27 tokens each), different for each cell from its first line."""
    lines = [f"Playbook {cell}: strategies learned from earlier problems."]
    for i in range(rules):
        t = TOPICS[(i + cell) % len(TOPICS)]
        lines.append(f"- [rule-{cell}-{i:02d}] When a problem counts {t}, write each change as a signed number, "
                     f"add them in order, and check the total against the story before answering.")
    return "\n".join(lines)


def spec(model: str, tests: int, rules: int) -> Any:
    return parse_spec({
        "name": "prefix-reuse",
        "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 2, "n_val": 4, "n_test": tests}},
        "methods": [{"name": "reference", "label": f"playbook-{c}", "params": {"system": playbook(c, rules)}}
                    for c in range(3)],
        "models": {"m": {"backend": "embedded", "model": model, "n_ctx": 4096}},
        "roles": {"solver": "m"}, "seeds": [0]})


def trial(model: str, tests: int, rules: int, kept: bool, run_dir: Path) -> tuple[float, int, int, int]:
    """(wall seconds, calls, prompt tokens sent, prompt tokens evaluated) of one fresh run."""
    s = spec(model, tests, rules)
    for loaded in list(embedded._MODELS.values()):  # the same loaded model for every trial; only the policy differs
        loaded.prefix = PrefixReuse(capacity=(1024 << 20) if kept else 0)
        loaded.llm.reset()
    start = time.perf_counter()
    cache = ResponseCache(run_dir.parent / f"{run_dir.name}-cache.sqlite")  # fresh: every call reaches the model
    run_experiment(s, run_dir, cache=cache, probe=False, cells_in_parallel=3, concurrency=3)
    wall = time.perf_counter() - start
    store = RunStore.open_existing(run_dir, read_only=True)
    r = store.query_one("SELECT COUNT(*) AS n, SUM(input_tokens) AS sent, SUM(input_tokens_evaluated) AS ev"
                        " FROM calls WHERE cached = 0")
    store.close()
    assert r is not None
    return wall, int(r["n"]), int(r["sent"]), int(r["ev"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--tests", type=int, default=12)
    ap.add_argument("--rules", type=int, default=36, help="playbook bullets (~27 tokens each)")
    ap.add_argument("--smoke", action="store_true", help="1 repeat, 2 test tasks, 12 rules")
    args = ap.parse_args()
    if args.smoke:
        args.repeats, args.tests, args.rules = 1, 2, 12
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; commit {commit}; model {args.model}")
    embedded.EmbeddedBackend(spec(args.model, 1, 1).models["m"]).load()
    rows: dict[bool, list[tuple[float, int, int, int]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as name:
        for k in range(args.repeats):
            for kept in (False, True):
                got = trial(args.model, args.tests, args.rules, kept, Path(name) / f"{k}-{kept}")
                rows[kept].append(got)
                print(f"  kept prefixes {'on ' if kept else 'off'}: wall {got[0]:6.1f} s, {got[1]} calls, "
                      f"sent {got[2]} tokens, evaluated {got[3]}", flush=True)
    off = statistics.median(w for w, *_ in rows[False])
    on = statistics.median(w for w, *_ in rows[True])
    sent = sum(r[2] for r in rows[True])
    evaluated = sum(r[3] for r in rows[True])
    print(f"evaluated / sent with kept prefixes: {evaluated / sent:.2f} (target <= 0.3); "
          f"off: {sum(r[3] for r in rows[False]) / sum(r[2] for r in rows[False]):.2f}")
    print(f"wall on / off (medians): {on:.1f} / {off:.1f} s = {on / off:.2f} (target <= 0.5)")


if __name__ == "__main__":
    sys.exit(main())
