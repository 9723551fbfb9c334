"""DSPy's searching optimisers under the protocol, on the scripted arith student (evidence: mechanism): each one's
search is exercised (the proposer role called where DSPy has a prompt model; the program it returns differs from the
start and beats it on test), rollouts touch train and val tasks only, a run is reproducible, and a budget stop keeps
the best program graded so far."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from evoarena.methods.lib_dspy.bridge import PROGRAM, Rollouts, load_dspy, new_program, state_text
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import parse_spec

SMALL = {
    "dspy.BootstrapFewShotWithRandomSearch": {"max_bootstrapped_demos": 3, "max_labeled_demos": 3,
                                              "num_candidate_programs": 2},
    "dspy.MIPROv2": {"auto": None, "num_candidates": 2, "num_trials": 3, "max_bootstrapped_demos": 1,
                     "max_labeled_demos": 1, "minibatch": False},
    "dspy.COPRO": {"breadth": 2, "depth": 1},
    "dspy.SIMBA": {"bsize": 4, "num_candidates": 2, "max_steps": 2, "max_demos": 2},
    "dspy.GEPA": {"auto": None, "max_metric_calls": 30},
}


def spec(name: str, params: dict[str, Any], **over: Any) -> Any:
    data: dict[str, Any] = {
        "name": "dspy-opt",
        "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 6, "n_val": 4, "n_test": 8,
                                                  "families": ["small_sum", "add", "mul"]}},
        "methods": [{"name": "frozen"}, {"name": name, "params": params}],
        "models": {"scripted": {"backend": "scripted", "model": "arith-student"}},
        "roles": {"solver": "scripted", "proposer": "scripted"},
        "seeds": [0],
        "budget": {"max_attempts": 400, "max_calls": 800},
    }
    data.update(over)
    return parse_spec(data)


def sql(run: Path, query: str, *args: Any) -> list[Any]:
    with sqlite3.connect(run / "run.sqlite") as db:
        return db.execute(query, args).fetchall()


def test_scores(tmp_path: Path) -> None:
    """`Rollouts.best`: among the states graded on the most tasks, the highest mean; the first on a tie."""
    calls = Rollouts.__new__(Rollouts)
    calls.scores = {"a": {"t1": 1.0}, "b": {"t1": 0.0, "t2": 1.0}, "c": {"t1": 1.0, "t2": 0.0}, "d": {"t1": 0.0}}
    assert calls.best() == "b"
    calls.scores = {}
    assert calls.best() is None


@pytest.mark.parametrize("name", sorted(SMALL))
def test_the_search_runs_under_the_cell(tmp_path: Path, name: str) -> None:
    """The optimiser's program beats the frozen start on test, differs from the start, was found with rollouts on
    train/val tasks only (and proposer calls, for optimisers with a prompt model)."""
    run = tmp_path / "run"
    run_experiment(spec(name, SMALL[name]), run, probe=False)
    conditions = {c["condition"]: c["test"]["mean"] for c in json.loads((run / "results.json").read_text())
                  ["conditions"]}
    assert conditions[name] > conditions["frozen"]
    cell = f"{name}__scripted__s0"
    tasks = {t for (t,) in sql(run, "SELECT DISTINCT task_id FROM attempts WHERE cell = ? AND phase = 'rollout'",
                               cell)}
    assert tasks and all(t.startswith(("train-", "val-")) for t in tasks)
    programs = [p for (p,) in sql(run, "SELECT id FROM harness_versions WHERE cell = ?", cell)]
    assert len(programs) >= 2
    roles = {r for (r,) in sql(run, "SELECT DISTINCT role FROM calls WHERE cell = ?", cell)}
    assert ("proposer" in roles) == (name != "dspy.BootstrapFewShotWithRandomSearch")


def test_a_run_is_reproducible(tmp_path: Path) -> None:
    """Seeded from the cell (MIPROv2's seed drawn from `ctx.rng`), single-threaded: the same spec gives the same
    program."""
    states = []
    for i in range(2):
        run_experiment(spec("dspy.MIPROv2", SMALL["dspy.MIPROv2"]), tmp_path / f"r{i}", probe=False)
        states.append(sql(tmp_path / f"r{i}", "SELECT id FROM harness_versions ORDER BY rowid"))
    assert states[0] == states[1]


def test_a_budget_stop_keeps_the_best_graded_program(tmp_path: Path) -> None:
    """COPRO stopped by `max_attempts` mid-search: the harness holds the best graded candidate, and the manifest
    and the run's log say why it stopped."""
    run = tmp_path / "run"
    run_experiment(spec("dspy.COPRO", {"breadth": 3, "depth": 2}, budget={"max_attempts": 10}), run, probe=False)
    (live,) = sql(run, "SELECT current_version FROM cells WHERE cell = 'dspy.COPRO__scripted__s0'")[0]
    (manifest,) = sql(run, "SELECT manifest FROM harness_versions WHERE id = ?", live)[0]
    assert "stopped early: budget exhausted" in json.loads(manifest)["intent"]
    (payload,) = sql(run, "SELECT payload FROM events WHERE kind = 'library_stopped'")[0]
    assert json.loads(payload)["kept"] == "best graded"


def test_state_text_is_dspys_dump() -> None:
    """The harness file is `Module.dump_state()` as DSPy writes it (sorted JSON)."""
    program = new_program("Predict")
    program.predictors()[0].demos = [load_dspy().Example(question="1 + 1 =", answer="2")]
    assert json.loads(state_text(program)) == json.loads(json.dumps(program.dump_state(), default=str))
    assert PROGRAM == "memory/dspy/program.json"
