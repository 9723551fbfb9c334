"""A cell's progress counts tasks — practice steps, each val task of each checkpoint, each test task — with its
phase, the running score of the phase and its calls and tokens, and ends at its total."""

from __future__ import annotations

import threading
from pathlib import Path

from evoarena.protocol.progress import CellProgress
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import parse_spec
from evoarena.store import RunStore


def _collect(spec, run_dir: Path, **kw) -> dict[str, list[CellProgress]]:  # type: ignore[no-untyped-def]
    seen: dict[str, list[CellProgress]] = {}
    lock = threading.Lock()

    def report(p: CellProgress) -> None:
        with lock:
            seen.setdefault(p.cell, []).append(p)

    run_experiment(spec, run_dir, progress=report, **kw)
    return seen


def test_a_cell_counts_its_tasks_through_its_phases(tmp_path: Path, make_spec) -> None:  # type: ignore[no-untyped-def]
    spec = make_spec()  # 6 train, 5 val, 10 test; one epoch, so checkpoints: the initial version and the last
    seen = _collect(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    assert len(seen) == 3
    for cell, updates in seen.items():
        last = updates[-1]
        assert last.phase == "done" and last.done == last.total
        assert last.total == 6 + 2 * 5 + 10 or last.total == 6 + 1 * 5 + 10  # one checkpoint when nothing changed
        assert [u.done for u in updates] == sorted(u.done for u in updates)
        phases = list(dict.fromkeys(u.phase for u in updates))
        assert phases == ["practice", "select", "test", "done"]
        test = [u for u in updates if u.phase == "test"][-1]
        scores = [r["score"] for r in store.query(
            "SELECT score FROM attempts WHERE cell = ? AND phase = 'test'", [cell])]
        assert test.graded == 10 and abs(test.score - sum(scores) / 10) < 1e-9
        calls = store.query("SELECT COUNT(*) AS n, SUM(input_tokens + output_tokens) AS t FROM calls WHERE cell = ?",
                            [cell])[0]
        assert (last.calls, last.tokens) == (calls["n"], calls["t"])


def test_a_curriculum_counts_practice_and_test_per_stage(tmp_path: Path) -> None:
    spec = parse_spec({"name": "p", "benchmark": {"name": "clr", "params": {"chains": 2, "layers": 2}},
                       "methods": [{"name": "history"}], "roles": {"solver": "s"},
                       "models": {"s": {"backend": "scripted", "model": "clr-student"}}})
    for concurrency in (1, 4):
        seen = _collect(spec, tmp_path / f"run{concurrency}", concurrency=concurrency)
        (updates,) = seen.values()
        last = updates[-1]
        assert last.phase == "done" and last.done == last.total == 2 * 2 * 2
        layers = [u for u in updates if u.phase == "stages"][-1]
        assert layers.graded == 4  # the stage tests carry the score; practice stages are counted, not scored
