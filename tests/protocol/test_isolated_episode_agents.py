"""Episode agents in a method's own process (`protocol.isolation: process`): JitRL's reranker, Continual Harness's
refiner and BPE's meta-actions give, run by run, the results they give in the cell's process — every step's choice,
call, harness edit and memory version crosses the pipe and comes back the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from own_process import own_process
from test_isolation_results import without_identity
from test_results_pinned import RECIPES, normalised

from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import ExperimentSpec, load_spec
from evoarena.store import RunStore


def _spec(name: str, isolation: str) -> ExperimentSpec:
    spec = load_spec(RECIPES / f"{name}.yaml").with_model("scripted")
    settings = own_process() if isolation == "process" else {"isolation": isolation}
    return spec.model_copy(update={"seeds": [0], "protocol": spec.protocol.model_copy(update=settings)})


def _versions(run: Path) -> list[tuple[str, str]]:
    """Every cell's harness versions in order, by content (ids include nothing of the process they came from)."""
    rows = RunStore(run).query("SELECT cell, step, tree_blob FROM harness_versions ORDER BY cell, step, tree_blob")
    return [(r["cell"], r["tree_blob"]) for r in rows]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", ["jitrl-maze", "continual-harness-maze", "bpe-household"])
def test_an_episode_agent_in_its_own_process_gives_the_in_process_results(name: str, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    results = {}
    for run, isolation in (("in", "in-process"), ("apart", "process")):
        monkeypatch.setenv("EVOARENA_CACHE_DIR", str(tmp_path / f"cache-{run}"))  # no run answered from the other's
        results[run] = run_experiment(_spec(name, isolation), tmp_path / run, probe=False)
    inside, apart = results["in"], results["apart"]
    assert apart["meta"]["extra"]["method_isolation"]["mode"] == "process"
    assert json.dumps(without_identity(normalised(apart)), sort_keys=True) == json.dumps(
        without_identity(normalised(inside)), sort_keys=True)
    assert _versions(tmp_path / "apart") == _versions(tmp_path / "in")
    traces = {run: _traces(tmp_path / run) for run in ("in", "apart")}
    assert traces["apart"] == traces["in"]  # every step: action, observation, score, calls by type, agent's notes
    assert any("agent" in step for _, steps in traces["apart"] for step in steps)  # the agents' notes crossed


def _traces(run: Path) -> list[tuple[tuple[str, str, str], list[dict[str, Any]]]]:
    """Every attempt's step trace, ledger ids aside (cells running side by side number their calls differently)."""
    rows = RunStore(run).query("SELECT cell, phase, task_id, answer FROM attempts ORDER BY cell, phase, id")
    return [((r["cell"], r["phase"], r["task_id"]),
             [{k: v for k, v in step.items() if k not in ("call_id", "call_ids")}
              for step in json.loads(r["answer"] or "{}").get("trace", [])]) for r in rows]
