"""End to end with the scripted model (evidence: mechanism)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evoarena.protocol.run.runner import run_experiment
from evoarena.store import RunStore


def strip_times(results: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in results["meta"].items() if k not in ("started_at", "finished_at")}
    return {**results, "meta": meta}


def test_run_writes_results_and_report_stamped_mechanism(tmp_path: Path, spec: Any) -> None:
    results = run_experiment(spec, tmp_path / "run")
    assert (tmp_path / "run" / "results.json").is_file()
    html = (tmp_path / "run" / "report.html").read_text()
    assert results["evidence"] == "mechanism" and "evidence: mechanism" in html
    acc = {c["condition"]: c["test"]["mean"] for c in results["conditions"]}
    # the scripted student only knows addition until a method teaches it the other families
    assert acc["frozen"] < 0.5
    assert acc["reflexion"] > acc["frozen"] and acc["bootstrap_fewshot"] > acc["frozen"]


def test_rerun_makes_no_new_calls_and_identical_results(tmp_path: Path, spec: Any) -> None:
    first = run_experiment(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    n_calls = len(store.query("SELECT id FROM calls"))
    second = run_experiment(spec, tmp_path / "run")
    assert len(store.query("SELECT id FROM calls")) == n_calls  # resumed: every unit already done
    assert json.dumps(strip_times(first), sort_keys=True) == json.dumps(strip_times(second), sort_keys=True)
    # a fresh run directory with the same cache: every call is a cache hit, counted as cached
    third = run_experiment(spec, tmp_path / "run2")
    rows = RunStore(tmp_path / "run2").query("SELECT cached FROM calls")
    assert rows and all(r["cached"] == 1 for r in rows)
    assert third["conditions"] == first["conditions"]
    assert third["calls"]["totals"]["calls"] == first["calls"]["totals"]["calls"]


def test_budget_on_attempts_is_enforced_and_reported(tmp_path: Path, make_spec: Any) -> None:
    spec = make_spec(budget={"max_attempts": 3}, methods=[{"name": "frozen"}])
    results = run_experiment(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    practice = store.query("SELECT COUNT(*) AS n FROM attempts WHERE phase='practice'")[0]["n"]
    assert practice == 3
    budget = results["budgets"][0]
    assert budget["used"]["attempts"] == 3 and budget["exhausted"] is True
    assert store.query("SELECT kind FROM events WHERE kind='budget_exhausted'")


def test_versions_are_kept_with_lineage(tmp_path: Path, spec: Any) -> None:
    run_experiment(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    rows = store.query("SELECT id, parent_ids FROM harness_versions WHERE cell LIKE 'reflexion%' ORDER BY rowid")
    assert len(rows) >= 2
    ids = [r["id"] for r in rows]
    for r in rows[1:]:
        assert json.loads(r["parent_ids"])[0] in ids


def test_select_last_grades_the_last_version_without_val_selection(tmp_path: Path, make_spec: Any) -> None:
    spec = make_spec(methods=[{"name": "reflexion"}], protocol={"select": "last"})
    run_experiment(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    cell = store.cells()[0]
    assert cell["selected_version"] == cell["current_version"]
    assert not store.query("SELECT key FROM units WHERE key LIKE 'select/%'")
    assert store.query("SELECT COUNT(*) AS n FROM attempts WHERE phase='select'")[0]["n"] == 0


def test_a_redone_unit_keeps_no_events_of_its_cut_off_run(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    store.event("gepa_iteration", {"n": 1}, cell="c", unit="practice/e0/0000/t1")
    store.event("gepa_iteration", {"n": 2}, cell="c", unit="practice/e0/0001/t2")
    store.drop_unit_events("c", "practice/e0/0001/t2")
    assert [r["unit"] for r in store.query("SELECT unit FROM events")] == ["practice/e0/0000/t1"]
