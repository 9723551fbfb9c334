"""A large synthetic run store for the viewer's speed tests: 10k test tasks × 3 conditions × 2 seeds and 100k ledger
rows, written with plain inserts (seconds, not a real run)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from evoarena.store import RunStore

CONDITIONS = ("a", "b", "c")
SEEDS = (0, 1)


def make_big_run(path: Path, *, tasks: int = 10_000, calls: int = 100_000) -> Path:
    store = RunStore(path)
    spec = {"name": "big", "benchmark": {"name": "arith"}, "methods": [{"name": c} for c in CONDITIONS],
            "models": {"m": {"backend": "scripted", "model": "arith-student"}}, "roles": {"solver": "m"}}
    store.upsert_run(id="big", name="big", spec_json=json.dumps(spec), spec_hash="-", code_version="-",
                     evidence="mechanism", status="finished", started_at="2026-01-01T00:00:00+00:00")
    cells = [f"{c}__m__s{s}" for c in CONDITIONS for s in SEEDS]
    for cell in cells:
        store.upsert_cell(cell, condition=cell[0], method=cell[0], model="m", seed=int(cell[-1]), status="done")
    rnd = random.Random(0)
    with store.transaction() as conn:
        conn.executemany(
            "INSERT INTO attempts (cell, phase, unit_key, task_id, version_id, answer, score, passed, created_at,"
            " call_id) VALUES (?, 'test', ?, ?, 'v', ?, ?, 1, '2026-01-01', NULL)",
            [(cell, f"test/t{i:05d}", f"t{i:05d}", "answer " * 20, float(rnd.random() < 0.5))
             for cell in cells for i in range(tasks)])
        conn.executemany(
            "INSERT INTO calls (cell, phase, role, model, backend, model_id, params, prompt_hash, cache_key,"
            " input_tokens, output_tokens, latency_s, cost_usd, cached, retries, created_at, unit)"
            " VALUES (?, ?, ?, 'm', 'scripted', 'm', '{}', 'h', 'k', 100, 10, 0.1, 0.001, ?, 0, '2026-01-01', ?)",
            [(cells[i % len(cells)], "test" if i % 3 else "practice", "reflector" if i % 97 == 0 else "solver",
              i % 2, f"u{i}") for i in range(calls)])
    store.close()
    return path
