"""The CLR methods recipe runs unchanged on real models: Qwen2.5-Coder-0.5B-Instruct (`--model embedded-small`) in
process, and the same GGUF behind `evoarena serve` on 127.0.0.1 (evidence: scaled). Narrowed to one chain and one
layer so CI can afford it: the methods, roles and generation settings are the recipe's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import ExperimentSpec, ModelSpec, load_spec
from evoarena.store import RunStore

pytestmark = pytest.mark.embedded

RECIPE = Path(__file__).parents[2] / "recipes" / "clr-methods.yaml"
CONDITIONS = ("dynamic_cheatsheet-self", "gepa-lesson")  # two update mechanisms, five roles between them


def narrowed(spec: ExperimentSpec) -> ExperimentSpec:
    methods = [m for m in spec.methods if m.label in CONDITIONS]
    assert [m.label for m in methods] == list(CONDITIONS), "the recipe lost a condition this test runs"
    params = {**spec.benchmark.params, "chains": 1, "layers": 1, "max_attempts": 1}
    return spec.model_copy(update={"methods": methods,
                                   "benchmark": spec.benchmark.model_copy(update={"params": params})})


@pytest.mark.timeout(900)  # ~4 min (embedded) and ~6 min (server) on 2 quiet cores: the recipe's max_tokens stand
@pytest.mark.parametrize("target", ["embedded", "openai"])
def test_clr_methods_recipe_runs_unchanged_on_a_real_model(target: str, tmp_path: Path,
                                                           request: pytest.FixtureRequest) -> None:
    spec = load_spec(RECIPE)
    if target == "openai":
        base_url, served = request.getfixturevalue("llama_server")
        models = {**spec.models, "local": ModelSpec(backend="openai", base_url=base_url, model=served,
                                                    timeout_s=600)}
        spec = spec.model_copy(update={"models": models}).with_model("local")
    else:
        spec = spec.with_model("embedded-small")
    # the role probes have their own embedded test (tests/cli/test_probe.py)
    results: dict[str, Any] = run_experiment(narrowed(spec), tmp_path / "run", probe=False)
    assert results["evidence"] == "scaled"
    store = RunStore(tmp_path / "run")
    calls = store.query("SELECT role, model_id, error, input_tokens, prompt_format FROM calls")
    prefix = "openai:" if target == "openai" else "embedded:qwen2.5-coder-0.5b-instruct"
    assert calls and all(c["model_id"].startswith(prefix) and c["error"] is None for c in calls)
    assert {c["prompt_format"] for c in calls} == ({None} if target == "openai" else {"chat-template"})
    roles = {c["role"] for c in calls}
    assert {"solver", "curator", "proposer"} <= roles  # every update role that ran reached the real model
    assert {c["condition"] for c in results["conditions"]} == set(CONDITIONS)
    assert all(c["test"]["n_graded"] == 1 for c in results["conditions"])
    assert "clr" in results["views"]
