"""The report reads a run once: its stored spec comes back as an ExperimentSpec, and a rebuild asks the store for the
run and its cells one time each, with a bounded number of queries per cell."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evoarena.protocol.run.reporting import rebuild_report
from evoarena.report.snapshot import RunSnapshot
from evoarena.spec import ExperimentSpec
from evoarena.store import RunStore


def test_the_stored_spec_reads_back_as_an_experiment_spec(arith_basics: Path) -> None:
    snap = RunSnapshot.load(RunStore(arith_basics, read_only=True))
    assert isinstance(snap.spec, ExperimentSpec) and snap.spec.spec_hash() == snap.run.spec_hash
    assert snap.conditions == ["frozen", "reflexion", "bootstrap_fewshot"]
    assert sorted(snap.cell_order().values()) == [0, 1, 2]
    assert snap.started is not None and snap.started.benchmark == {"name": "arith", "protocol": "practice-select-test"}


def test_a_rebuild_reads_the_run_and_its_cells_once(arith_basics: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(arith_basics, run_dir)
    store = RunStore(run_dir, read_only=True)
    asked: list[str] = []
    store._conn.set_trace_callback(asked.append)
    before = (arith_basics / "results.json").read_text("utf-8")
    rebuild_report(store)
    assert (run_dir / "results.json").read_text("utf-8") == before
    cells = len(RunSnapshot.load(RunStore(arith_basics, read_only=True)).cells)
    assert sum("FROM cells" in q for q in asked) == 1  # was 7 before the report read a snapshot
    assert sum("FROM runs" in q for q in asked) == 1
    assert len(asked) <= 8 + 8 * cells, asked  # 31 for these 3 cells (40 before)


def test_a_store_whose_spec_is_no_experiment_spec_is_refused(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.upsert_run(id="r", name="s", spec_json=json.dumps({"name": "s"}), spec_hash="h", code_version="c",
                     evidence="mechanism", status="finished", started_at="now")
    with pytest.raises(ValueError, match="no experiment spec"):
        RunSnapshot.load(store)
    with pytest.raises(FileNotFoundError):
        RunSnapshot.load(RunStore(tmp_path / "empty"))
