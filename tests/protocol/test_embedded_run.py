"""The quickstart loop end to end on the real Qwen2.5-Coder-0.5B-Instruct (evidence: scaled): in process (its GGUF
chat template applied by the embedded backend) and through `evoarena serve` on 127.0.0.1 (the `openai` backend)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evoarena.protocol.run.runner import run_experiment
from evoarena.store import RunStore

pytestmark = pytest.mark.embedded


@pytest.mark.parametrize("target", ["embedded", "openai"])
def test_small_quickstart_on_the_small_instruct_model(target: str, tmp_path: Path, make_spec: Any,
                                                      request: pytest.FixtureRequest) -> None:
    if target == "openai":
        base_url, served = request.getfixturevalue("llama_server")
        model = {"backend": "openai", "base_url": base_url, "model": served, "concurrency": 1, "timeout_s": 600}
    else:
        model = {"backend": "embedded", "model": "qwen2.5-coder-0.5b-instruct"}
    spec = make_spec(
        benchmark={"name": "arith", "params": {"seed": 0, "n_train": 3, "n_val": 2, "n_test": 3}},
        methods=[{"name": "frozen"}, {"name": "reflexion", "params": {"max_tokens": 48}},
                 {"name": "bootstrap_fewshot", "params": {"max_labeled_demos": 2}}],
        models={"small": model},
        roles={"solver": "small", "reflector": "small"},
    )
    results = run_experiment(spec, tmp_path / "run")
    assert results["evidence"] == "scaled"
    store = RunStore(tmp_path / "run")
    calls = store.query("SELECT model_id, phase, input_tokens, output_tokens, cached, error, prompt_format FROM calls")
    assert calls and all(c["model_id"].startswith(f"{target}:") for c in calls)
    assert all(c["input_tokens"] > 0 and c["error"] is None for c in calls)
    # the ledger says how the prompt was made: the GGUF's chat template in process; the server's own template (not
    # evoarena's doing) for the openai backend
    assert {c["prompt_format"] for c in calls} == ({"chat-template"} if target == "embedded" else {None})
    # the reflector's role probes ran first, on the same model; the cells' totals leave them out
    assert {c["phase"] for c in calls if c["phase"] == "probe"} and results["probes"]["rows"][0]["role"] == "reflector"
    cells = [c for c in calls if c["phase"] != "probe"]
    assert results["calls"]["totals"]["input_tokens"] == sum(c["input_tokens"] for c in cells)
    assert {c["condition"] for c in results["conditions"]} == {"frozen", "reflexion", "bootstrap_fewshot"}
    again = run_experiment(spec, tmp_path / "run")  # resume: nothing left to do
    assert len(store.query("SELECT id FROM calls")) == len(calls)
    assert again["conditions"] == results["conditions"]
