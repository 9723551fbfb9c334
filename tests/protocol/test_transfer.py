"""`evoarena transfer`: each cell's selected harness graded by another model on the run's own locked test split — its
own phase in the ledger, read back on a second call, refused when the test split changed — and the matrix (evolved
on A → tested on B) in results.json and report.html, the run's own results untouched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evoarena.cli.app import app
from evoarena.protocol.run.runner import run_experiment
from evoarena.protocol.run.transfer import run_transfer
from evoarena.spec import SpecError
from evoarena.store import RunStore

HERE = Path(__file__).resolve().parent
MODELS = {"scripted": {"backend": "scripted", "model": "arith-student"},
          "weak": {"backend": "scripted", "model": "weak_policy:weak_student"}}  # learns nothing from a harness


@pytest.fixture
def run(tmp_path: Path, make_spec: Any) -> tuple[Path, dict[str, Any]]:
    """bootstrap_fewshot's final demos score lower on val than earlier ones: its cells test an earlier version."""
    bench = {"name": "arith", "params": {"seed": 1, "n_train": 6, "n_val": 6, "n_test": 10}}
    demos = {"name": "bootstrap_fewshot", "params": {"max_labeled_demos": 2, "max_bootstrapped_demos": 2}}
    spec = make_spec(models=MODELS, seeds=[0, 1], benchmark=bench, protocol={"select_every": 1},
                     methods=[{"name": "frozen"}, {"name": "reflexion"}, demos])
    return tmp_path / "run", run_experiment(spec, tmp_path / "run", probe=False, search=(HERE,))


def _calls(store: RunStore, phase: str) -> list[dict[str, Any]]:
    return store.query("SELECT model, cell, unit FROM calls WHERE phase=?", [phase])


def test_a_transfer_grades_each_selected_harness_with_the_other_model(run: tuple[Path, dict[str, Any]]) -> None:
    where, before = run
    assert "transfer" not in before
    done = run_transfer(where, "weak", search=(HERE,))
    store = RunStore(where)
    assert [(c.condition, c.seed, c.reused) for c in done] == [
        (cond, seed, False) for cond in ("bootstrap_fewshot", "frozen", "reflexion") for seed in (0, 1)]
    assert {s["condition"] for s in before["selections"] if s["selected"] != s["final"]} == {"bootstrap_fewshot"}
    for c in done:  # the selected version, every test task, the other model's calls under the cell's unit
        rows = store.query("SELECT version_id, AVG(score) AS m, COUNT(*) AS n FROM attempts WHERE cell=? AND "
                           "phase='transfer' GROUP BY version_id", [c.cell])
        selected = store.query_one("SELECT selected_version FROM cells WHERE cell=?", [c.cell])["selected_version"]
        assert [(r["version_id"], r["n"]) for r in rows] == [(selected, 10)] and rows[0]["m"] == c.result.mean
    transfer_calls = _calls(store, "transfer")
    assert {(r["model"], r["unit"]) for r in transfer_calls} == {("weak", "transfer/weak")}
    assert len(transfer_calls) == 60
    result = CliRunner().invoke(app, ["transfer", str(where), "--model", "weak", "--import-from", str(HERE)])
    assert result.exit_code == 0, result.output
    assert "0 cell(s) graded, 6 read back" in result.output and "evolved on" in result.output
    assert len(_calls(store, "transfer")) == 60  # read back: no call again
    results = json.loads((where / "results.json").read_text())
    for key in ("conditions", "calls", "budgets", "selections", "versus_baseline"):
        assert results[key] == before[key], key  # the run's own results are as they were
    matrix = results["transfer"]
    assert matrix["models"] == ["scripted", "weak"] and matrix["spend"][0]["calls"] == 60
    got = {(c["condition"], c["tested_on"]): c for c in matrix["cells"]}
    own = {c["condition"]: c["test"] for c in before["conditions"]}
    for cond in ("bootstrap_fewshot", "frozen", "reflexion"):  # the diagonal: the run's own test score and interval
        assert [got[cond, "scripted"][k] for k in ("mean", "ci_low", "ci_high")] == \
            [own[cond][k] for k in ("mean", "ci_low", "ci_high")]
        assert got[cond, "weak"]["n_seeds"] == 2 and got[cond, "weak"]["n_tasks"] == 10
    means = {c.cell: c.result.mean for c in done}
    assert got["reflexion", "weak"]["mean"] == pytest.approx((means["reflexion__scripted__s0"]
                                                              + means["reflexion__scripted__s1"]) / 2)
    # the weaker student ignores what reflexion and the demos taught; frozen taught nothing, so it loses nothing
    for cond in ("bootstrap_fewshot", "reflexion"):
        assert got[cond, "weak"]["mean"] < got[cond, "scripted"]["mean"]
    assert got["frozen", "weak"]["mean"] == got["frozen", "scripted"]["mean"]
    html = (where / "report.html").read_text()
    assert 'id="transfer"' in html and "tested on weak" in html


def test_a_changed_test_split_or_an_unknown_model_is_refused_before_any_call(run: tuple[Path, dict[str, Any]]) -> None:
    where, _ = run
    store = RunStore(where)
    with pytest.raises(SpecError, match=r"--model: unknown model 'nope'"):
        run_transfer(where, "nope", search=(HERE,))
    store.execute("UPDATE runs SET test_hash='0000'")
    with pytest.raises(SpecError, match="the benchmark's test split changed since the run"):
        run_transfer(where, "weak", search=(HERE,))
    assert not _calls(store, "transfer")
    result = CliRunner().invoke(app, ["transfer", str(where), "--model", "weak", "--import-from", str(HERE)])
    assert result.exit_code == 2 and "test split changed" in result.output and len(result.output.splitlines()) == 1


def test_a_transfer_to_the_model_a_cell_evolved_with_grades_nothing_again(run: tuple[Path, dict[str, Any]]) -> None:
    where, _ = run
    assert run_transfer(where, "scripted", search=(HERE,)) == []
    assert not _calls(RunStore(where), "transfer")
    result = CliRunner().invoke(app, ["transfer", str(where), "--model", "scripted", "--import-from", str(HERE)])
    assert result.exit_code == 2 and "every one was evolved with that model" in result.output
