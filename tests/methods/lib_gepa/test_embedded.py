"""`recipes/gepa-vs-library.yaml` runs end to end on a real model: Qwen2.5-Coder-0.5B-Instruct (`--model
embedded-small`) in process plays the solver and the proposer of evoarena's `gepa` and of the `gepa` package's
`gepa.optimize` (evidence: scaled). Narrowed so CI can afford it: two tasks per split, a small call budget; the
methods, roles and generation settings are the recipe's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import load_spec
from evoarena.store import RunStore

pytestmark = pytest.mark.embedded

RECIPE = Path(__file__).parents[3] / "recipes" / "gepa-vs-library.yaml"


@pytest.mark.timeout(900)  # a few minutes on 2 quiet cores: ~30 short calls of the 0.5B
def test_gepa_and_the_gepa_library_side_by_side_on_a_real_model(tmp_path: Path) -> None:
    spec = load_spec(RECIPE).with_model("embedded-small")
    params = {**spec.benchmark.params, "n_train": 2, "n_val": 2, "n_test": 2}
    methods = [m for m in spec.methods if m.name in ("gepa", "gepa.optimize")]
    spec = spec.model_copy(update={
        "methods": methods, "benchmark": spec.benchmark.model_copy(update={"params": params}),
        "budget": spec.budget.model_copy(update={"max_calls": 16})})
    results = run_experiment(spec, tmp_path / "run", probe=False)
    assert results["evidence"] == "scaled"
    assert results["meta"]["extra"]["libraries"] == {"gepa.optimize": "gepa 0.1.4"}
    assert {c["condition"] for c in results["conditions"]} == {"gepa", "gepa.optimize"}
    assert all(c["test"]["n_graded"] == 2 for c in results["conditions"])
    calls = RunStore(tmp_path / "run").query(
        "SELECT c.role, c.model_id, c.error, k.condition FROM calls c JOIN cells k ON c.cell = k.cell")
    assert calls and all(c["model_id"].startswith("embedded:qwen2.5-coder-0.5b-instruct") for c in calls)
    assert all(c["error"] is None for c in calls)
    by = {(c["condition"], c["role"]) for c in calls}
    # both reached the real model in both roles: the library's reflection calls go through the cell's proposer
    assert {("gepa", "solver"), ("gepa.optimize", "solver"), ("gepa.optimize", "proposer")} <= by
