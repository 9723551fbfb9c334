"""What the README promises of the quickstart (`make demo-scripted`): with `--model scripted` the power check on a
12-task pilot prints an MDE for every comparison, the run reuses the pilot's calls, finishes well under a minute,
gives every condition a test score and reports reference − frozen as the headroom (evidence: mechanism). Per-condition
scores are not asserted: the recipe's methods may change."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.report.results_record import RESULTS_FILE, RunResults
from evoarena.spec import load_spec
from evoarena.store import RunStore, queries

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "quickstart.yaml"
PILOT = 12
runner = CliRunner()


@pytest.mark.timeout(120)
def test_the_quickstart_plans_then_runs_with_the_scripted_model(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the pilot is kept under runs/pilots/ of the working directory
    spec = load_spec(RECIPE)
    conditions = [m.label or m.name for m in spec.methods]
    baseline = conditions[0]

    plan = runner.invoke(app, ["plan", str(RECIPE), "--pilot", str(PILOT), "--model", "scripted", "--json"])
    assert plan.exit_code == 0, plan.output
    planned = json.loads(plan.stdout)
    assert planned["pilot"]["calls"] == PILOT
    assert {c["condition"]: c["baseline"] for c in planned["comparisons"]} == {c: baseline for c in conditions[1:]}
    assert all(c["mde"] > 0 for c in planned["comparisons"])

    start = time.monotonic()
    run = runner.invoke(app, ["run", str(RECIPE), "--model", "scripted", "--run-dir", str(tmp_path / "run")],
                        env={"COLUMNS": "200"})
    assert run.exit_code == 0, run.output
    assert time.monotonic() - start < 30

    results = RunResults.read(tmp_path / "run" / RESULTS_FILE)
    assert sorted(c.condition for c in results.conditions) == sorted(conditions)
    n_test = spec.benchmark.params["n_test"]
    assert all(c.test is not None and c.test.n_graded == n_test for c in results.conditions)
    (headroom,) = results.headroom or []
    assert (headroom.control, headroom.baseline) == ("reference", baseline)
    assert f"reference − {baseline}:" in run.stdout and "at 80% power" in run.stdout

    store = RunStore(tmp_path / "run", read_only=True)
    tested = [c for c in queries.calls(store, errors=False)
              if c.phase == "test" and c.cell is not None and c.cell.startswith(f"{baseline}__")]
    assert sum(c.cached for c in tested) == PILOT  # the pilot's calls, answered from the response cache
