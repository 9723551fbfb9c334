"""The archive's result matrix (store.archive): every attempt as (version, phase, task, rollout) with its call's
tokens, summed per version; and `evoarena versions --json` showing both per node."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.store import RunStore
from evoarena.store.archive import result_matrix, task_scores, version_costs

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "ahe-arith.yaml"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("archive") / "run"
    result = CliRunner().invoke(app, ["run", str(RECIPE), "--model", "scripted", "--run-dir", str(target)])
    assert result.exit_code == 0, result.output
    return target


def test_the_matrix_holds_every_attempt_with_rollout_indexes_and_tokens(run_dir: Path) -> None:
    store = RunStore(run_dir)
    cell = next(c["cell"] for c in store.cells() if c["condition"] == "ahe")
    matrix = result_matrix(store, cell)
    assert len(matrix) == store.query("SELECT COUNT(*) AS n FROM attempts WHERE cell=?", [cell])[0]["n"]
    # AHE runs each round's tasks k = 2 times with the same version: rollouts 0 and 1 (and more in later rounds)
    per_key = Counter((e.version_id, e.phase, e.task_id) for e in matrix)
    for (v, phase, task), n in per_key.items():
        assert sorted(e.rollout for e in matrix if (e.version_id, e.phase, e.task_id) == (v, phase, task)) == list(
            range(n))
    assert any(n >= 2 for (_, phase, _), n in per_key.items() if phase == "rollout")
    # the tokens are the ledger's: every solver call of this cell made exactly one attempt
    ledger = store.query("SELECT SUM(input_tokens) AS i, SUM(output_tokens) AS o FROM calls "
                         "WHERE cell=? AND role='solver'", [cell])[0]
    costs = version_costs(matrix)
    assert sum(c.input_tokens for c in costs.values()) == ledger["i"]
    assert sum(c.output_tokens for c in costs.values()) == ledger["o"]
    assert sum(c.evaluations for c in costs.values()) == sum(e.score is not None for e in matrix)


def test_versions_json_shows_each_nodes_tasks_and_cost(run_dir: Path) -> None:
    store = RunStore(run_dir)
    cell = next(c["cell"] for c in store.cells() if c["condition"] == "ahe")
    result = CliRunner().invoke(app, ["versions", str(run_dir), "--cell", cell, "--json"])
    assert result.exit_code == 0, result.output
    nodes = json.loads(result.stdout)[cell]
    graded = [n for n in nodes if n["cost"] is not None]
    assert graded and all(n["cost"]["attempts"] == sum(len(r) for t in n["tasks"].values() for r in t.values())
                          for n in graded)
    matrix = result_matrix(store, cell)
    first = graded[0]
    assert first["tasks"] == json.loads(json.dumps(task_scores(matrix, first["id"])))
