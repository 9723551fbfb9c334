"""Performance benchmark: prompt-prefix reuse on the embedded model, a playbook-shaped study.

Three cells in flight, each with its own ~1k-token playbook as the system prompt (as ACE's or Dynamic Cheatsheet's
generator calls carry theirs), answer arith word problems on the embedded 0.5B; their calls interleave on the model.
Trials alternate three arms, each into a fresh run directory with an empty response cache:
- `today`: no kept prefixes (EVOARENA_EMBEDDED_PREFIX_MB=0: llama-cpp-python reuses only what the previous call
  shared) and no batched decoding (EVOARENA_EMBEDDED_PARALLEL=1) — the backend before either existed;
- `prefixes`: kept prefixes, no batching;
- `both`: the defaults (kept prefixes, up to 3 waiting calls decoded together).
Reports prompt tokens sent vs evaluated (from the ledger) and wall time, as ratios to `today` in the same run.
Targets: evaluated <= 0.3 x sent, wall <= 0.5 x today.

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
from evoarena.models.embedded_batch import PARALLEL_ENV
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


ARMS = {"today": (False, 1), "prefixes": (True, 1), "both": (True, 3)}  # (kept prefixes, batched decoding k)


def trial(model: str, tests: int, rules: int, arm: str, run_dir: Path) -> tuple[float, int, int, int]:
    """(wall seconds, calls, prompt tokens sent, prompt tokens evaluated) of one fresh run."""
    kept, k = ARMS[arm]
    os.environ[PARALLEL_ENV] = str(k)
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
    rows: dict[str, list[tuple[float, int, int, int]]] = {arm: [] for arm in ARMS}
    with tempfile.TemporaryDirectory() as name:
        for k in range(args.repeats):
            for arm in ARMS:
                got = trial(args.model, args.tests, args.rules, arm, Path(name) / f"{k}-{arm}")
                rows[arm].append(got)
                print(f"  {arm:<8}: wall {got[0]:6.1f} s, {got[1]} calls, sent {got[2]} tokens, evaluated {got[3]}",
                      flush=True)
    today = statistics.median(w for w, *_ in rows["today"])
    for arm, got in rows.items():
        wall = statistics.median(w for w, *_ in got)
        share = sum(r[3] for r in got) / sum(r[2] for r in got)
        print(f"{arm:<8}: evaluated / sent {share:.2f} (target <= 0.3); wall median {wall:.1f} s = {wall / today:.2f}"
              f" x today's (target <= 0.5)")


if __name__ == "__main__":
    sys.exit(main())
