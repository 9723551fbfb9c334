"""`evoarena probe-roles`: the table per role × method, --json, the warning line, and `run` with and without the
probes (the run reuses what probe-roles kept)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.protocol.run.probes import plan_probes
from evoarena.protocol.validate import validate_spec
from evoarena.spec import load_spec
from evoarena.store import RunStore, queries

runner = CliRunner()
RECIPES = Path(__file__).resolve().parents[2] / "recipes"
POLICY = 'def refuser(messages, params):\n    return "Certainly! Please provide the new instruction."\n'


def refusing_spec(tmp_path: Path) -> Path:
    """The arith-basics spec narrowed, its reflector a policy that asks for input instead of reflecting."""
    data = yaml.safe_load((RECIPES / "arith-basics.yaml").read_text("utf-8"))
    data["benchmark"]["params"].update({"n_train": 4, "n_val": 3, "n_test": 4})
    data["models"]["refuser"] = {"backend": "scripted", "model": "refusing_cli:refuser"}
    data["roles"] = {"solver": "scripted", "reflector": "refuser"}
    (tmp_path / "refusing_cli.py").write_text(POLICY, "utf-8")
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data), "utf-8")
    return path


def test_probe_roles_prints_the_table(tmp_path: Path) -> None:
    result = runner.invoke(app, ["probe-roles", str(RECIPES / "clr-methods.yaml"), "--model", "scripted",
                                 "--run-dir", str(tmp_path / "run")], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for cell in ("role probes: clr-methods", "reflector", "curator", "proposer", "diagnoser", "patcher", "ace",
                 "dynamic_cheatsheet", "gepa", "skillprox", "6/6", "warning below 50% usable"):
        assert cell in result.output
    assert "warning:" not in result.output  # the scripted exception-lister passes every probe


def test_probe_roles_json_and_the_warning(tmp_path: Path) -> None:
    spec = refusing_spec(tmp_path)
    result = runner.invoke(app, ["probe-roles", str(spec), "--run-dir", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["rows"]
    assert (row["role"], row["method"], row["model"], row["n"], row["well_formed"], row["usable"]) == (
        "reflector", "reflexion", "refuser", 2, 2, 0)
    table = runner.invoke(app, ["probe-roles", str(spec), "--run-dir", str(tmp_path / "run")])
    assert "warning: reflector (refuser) produced 0/2 usable reflexion updates in probes: a null here is " \
           "uninformative (conditions: reflexion)" in " ".join(table.output.split())


def test_run_warns_at_the_start_and_reuses_the_probes_of_probe_roles(tmp_path: Path) -> None:
    spec = refusing_spec(tmp_path)
    run_dir = tmp_path / "run"
    assert runner.invoke(app, ["probe-roles", str(spec), "--run-dir", str(run_dir)]).exit_code == 0
    result = runner.invoke(app, ["run", str(spec), "--run-dir", str(run_dir)])
    assert result.exit_code == 0, result.output
    assert "warning: reflector (refuser) produced 0/2 usable" in " ".join(result.output.split())
    assert len(queries.calls(RunStore(run_dir), phase="probe")) == 2  # kept by probe-roles, not asked again
    results = json.loads((run_dir / "results.json").read_text("utf-8"))
    warned = {c["condition"]: c.get("probe_warnings") for c in results["conditions"]}
    assert warned["reflexion"] and warned["frozen"] is None


def test_run_no_probe_skips_them(tmp_path: Path) -> None:
    spec = refusing_spec(tmp_path)
    result = runner.invoke(app, ["run", str(spec), "--no-probe", "--run-dir", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output
    assert queries.calls(RunStore(tmp_path / "run"), phase="probe") == []
    assert json.loads((tmp_path / "run" / "results.json").read_text("utf-8"))["probes"]["rows"] == []


@pytest.mark.embedded
@pytest.mark.timeout(3600)
def test_probe_roles_on_the_small_instruct_model(tmp_path: Path) -> None:
    """Issue 11 §5: `evoarena probe-roles recipes/clr-methods.yaml --model embedded-small` finishes and prints the
    table: every planned probe (33 since EvoSkill's were added), capped at 192 tokens here to keep CI short
    (docs/probes.md has the 512-token measurement)."""
    result = runner.invoke(app, ["probe-roles", str(RECIPES / "clr-methods.yaml"), "--model", "embedded-small",
                                 "--run-dir", str(tmp_path / "run"), "--max-tokens", "192"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "role probes: clr-methods" in result.output
    for role in ("reflector", "curator", "proposer", "diagnoser", "patcher"):
        assert role in result.output
    calls = queries.calls(RunStore(tmp_path / "run"), phase="probe")
    spec = load_spec(RECIPES / "clr-methods.yaml").with_model("embedded-small")
    resolved = validate_spec(spec)
    planned = plan_probes(spec, resolved.methods, resolved.benchmark)
    assert len(calls) == len(planned) and all(c.model == "embedded-small" for c in calls)


def test_run_stops_on_a_probe_warning_before_any_cell(tmp_path: Path) -> None:
    spec, run_dir = refusing_spec(tmp_path), tmp_path / "run"
    result = runner.invoke(app, ["run", str(spec), "--run-dir", str(run_dir), "--stop-on-probe-warning"])
    assert result.exit_code == 3, result.output
    assert "error: stopped before any cell: 1 role probe warning(s), first reflector of reflexion (refuser) at " \
           "0/2 usable" in " ".join(result.output.split())
    store = RunStore(run_dir)
    assert [c.phase for c in queries.calls(store)] == ["probe", "probe"]  # no cell made a call
    assert store.run()["status"] == "interrupted"
    resumed = runner.invoke(app, ["run", str(spec), "--run-dir", str(run_dir), "--json"])
    assert resumed.exit_code == 0, resumed.output  # without the flag the run goes on, its probes reused
    assert len(queries.calls(RunStore(run_dir), phase="probe")) == 2
    clash = runner.invoke(app, ["run", str(spec), "--no-probe", "--stop-on-probe-warning"])
    assert clash.exit_code == 2 and "needs the role probes" in clash.output
