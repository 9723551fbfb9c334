"""Score-vs-spend (`protocol.spend_curves`): at each spend, the checkpoint selection would have kept had the budget
ended there — its val score, as test grades only the selected version — with the spend read from the ledger; the
curve ends at the run's own selection, and a run that does not ask has no such section."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evoarena.cli.app import app
from evoarena.protocol.run.runner import run_experiment
from evoarena.report.spend_curves import Checkpoint, kept_by
from evoarena.store import RunStore


def _k(step: int, calls: float, val: float) -> Checkpoint:
    return Checkpoint(step=step, spend={"calls": calls, "tokens": 0.0, "usd": 0.0}, val=val, by_task={})


def test_the_checkpoint_kept_within_a_budget_is_the_best_on_val_and_the_earliest_on_a_tie() -> None:
    ks = [_k(0, 0, 0.2), _k(1, 3, 0.5), _k(2, 6, 0.5), _k(3, 9, 0.7)]
    assert [kept_by(ks, "calls", b).step for b in (0, 2, 3, 8, 9, 100)] == [0, 0, 1, 1, 3, 3]  # type: ignore[union-attr]
    assert kept_by(ks[1:], "calls", 2) is None


def _ledger_spend(store: RunStore, cell: str) -> list[int]:
    """Cumulative practice calls after each practice step, from the ledger in the order the calls were made."""
    per_unit: dict[str, int] = {}
    for r in store.query("SELECT unit FROM calls WHERE cell=? AND phase='practice' AND error IS NULL ORDER BY id",
                         [cell]):
        per_unit[r["unit"]] = per_unit.get(r["unit"], 0) + 1
    steps = [str(r["key"]) for r in store.query(
        "SELECT key FROM units WHERE cell=? AND key LIKE 'practice/%' ORDER BY rowid", [cell])]
    out = [0]
    for key in steps:
        out.append(out[-1] + per_unit.get(key, 0))
    return out


def test_a_run_that_asks_gets_curves_ending_at_its_selection(tmp_path: Path, make_spec: Any) -> None:
    bench = {"name": "arith", "params": {"seed": 1, "n_train": 6, "n_val": 6, "n_test": 10}}
    demos = {"name": "bootstrap_fewshot", "params": {"max_labeled_demos": 2, "max_bootstrapped_demos": 2}}
    spec = make_spec(seeds=[0, 1], benchmark=bench, protocol={"select_every": 1, "spend_curves": True},
                     methods=[{"name": "frozen"}, {"name": "reflexion"}, demos])
    results = run_experiment(spec, tmp_path / "run", probe=False)
    store = RunStore(tmp_path / "run")
    section = results["spend_curves"]
    assert section["split"] == "val"
    curves = {(c["condition"], c["axis"]): c["points"] for c in section["curves"]}
    assert set(curves) == {(m, a) for m in ("frozen", "reflexion", "bootstrap_fewshot") for a in ("calls", "tokens")}
    assert [p["spend"] for p in curves["frozen", "calls"]] == [0]  # nothing practised: one point
    for cond in ("reflexion", "bootstrap_fewshot"):
        sels = [s for s in results["selections"] if s["condition"] == cond]
        kept = [next(k["val"] for k in s["candidates"] if k["version"] == s["selected"]) for s in sels]
        last = curves[cond, "calls"][-1]
        assert last["mean"] == pytest.approx(sum(kept) / len(kept), abs=1e-6) and last["n_seeds"] == 2
        first = curves[cond, "calls"][0]
        initial = [s["candidates"][0]["val"] for s in sels]
        assert first["spend"] == 0 and first["mean"] == pytest.approx(sum(initial) / len(initial), abs=1e-6)
        spends = [p["spend"] for p in curves[cond, "calls"]]
        assert spends == sorted(set(spends))
        ledger = {x for s in sels for x in (_ledger_spend(store, f"{cond}__scripted__s{s['seed']}")[k["step"]]
                                            for k in s["candidates"] if k["val"] is not None)}
        assert set(spends) == ledger  # each point is a checkpoint's practice spend, as the ledger counts it
        interval = ("mean", "ci_low", "ci_high")  # the same scores give the same interval, on either axis
        assert [curves[cond, "calls"][-1][k] for k in interval] == [curves[cond, "tokens"][-1][k] for k in interval]
    bfs = curves["bootstrap_fewshot", "calls"]
    assert max(p["mean"] for p in bfs) > bfs[0]["mean"]  # selection found better demos along the way
    html = (tmp_path / "run" / "report.html").read_text()
    assert 'id="spend-calls"' in html and 'class="band"' in html and "Score vs spend" in html
    plain = run_experiment(make_spec(methods=[{"name": "frozen"}]), tmp_path / "plain", probe=False)
    assert "spend_curves" not in plain and "spend_curves" not in json.loads(
        (tmp_path / "plain" / "results.json").read_text())


def test_evoarena_curve_grades_the_other_checkpoints_on_test_and_the_curves_then_read_test(
        tmp_path: Path, make_spec: Any) -> None:
    bench = {"name": "arith", "params": {"seed": 1, "n_train": 6, "n_val": 6, "n_test": 10}}
    demos = {"name": "bootstrap_fewshot", "params": {"max_labeled_demos": 2, "max_bootstrapped_demos": 2}}
    before = run_experiment(make_spec(benchmark=bench, protocol={"select_every": 1}, methods=[demos]),
                            tmp_path / "run", probe=False)
    assert "spend_curves" not in before  # not asked for
    result = CliRunner().invoke(app, ["curve", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    (sel,) = before["selections"]
    others = [k["version"] for k in sel["candidates"] if k["val"] is not None and k["version"] != sel["selected"]]
    assert f"{len(others)} checkpoint(s) graded on test, 0 read back; the curves are on test" in result.output
    store = RunStore(tmp_path / "run")
    graded = store.query("SELECT version_id, COUNT(*) AS n FROM attempts WHERE phase='curve' GROUP BY version_id")
    assert sorted((r["version_id"], r["n"]) for r in graded) == sorted((v, 10) for v in others)
    assert {r["phase"] for r in store.query("SELECT DISTINCT phase FROM calls WHERE unit LIKE 'curve/%'")} == {"curve"}
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["conditions"] == before["conditions"] and results["calls"] == before["calls"]
    points = next(c["points"] for c in results["spend_curves"]["curves"] if c["axis"] == "calls")
    assert results["spend_curves"]["split"] == "test"
    assert points[-1]["mean"] == pytest.approx(before["conditions"][0]["test"]["mean"], abs=1e-6)  # the run's own
    tests = {r["version_id"]: r["m"] for r in store.query(
        "SELECT version_id, AVG(score) AS m FROM attempts WHERE phase IN ('test', 'curve') GROUP BY version_id")}
    assert points[0]["mean"] == pytest.approx(tests[sel["candidates"][0]["version"]], abs=1e-6)  # the initial's test
    again = CliRunner().invoke(app, ["curve", str(tmp_path / "run")])
    assert f"0 checkpoint(s) graded on test, {len(others)} read back" in again.output
