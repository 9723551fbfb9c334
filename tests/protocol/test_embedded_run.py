"""The quickstart loop end to end on the real embedded Gemma 3 270M (evidence: scaled)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evoarena.protocol.runner import run_experiment
from evoarena.store import RunStore

pytestmark = pytest.mark.embedded


def test_small_quickstart_on_the_embedded_model(tmp_path: Path, make_spec: Any) -> None:
    spec = make_spec(
        benchmark={"name": "arith", "params": {"seed": 0, "n_train": 3, "n_val": 2, "n_test": 3}},
        methods=[{"name": "frozen"}, {"name": "reflexion", "params": {"max_tokens": 48}},
                 {"name": "bootstrap_fewshot", "params": {"max_labeled_demos": 2}}],
        models={"gemma": {"backend": "embedded"}},
        roles={"solver": "gemma", "reflector": "gemma"},
    )
    results = run_experiment(spec, tmp_path / "run")
    assert results["evidence"] == "scaled"
    store = RunStore(tmp_path / "run")
    calls = store.query("SELECT model_id, input_tokens, output_tokens, cached, error FROM calls")
    assert calls and all(c["model_id"].startswith("embedded:") for c in calls)
    assert all(c["input_tokens"] > 0 and c["error"] is None for c in calls)
    assert results["calls"]["totals"]["input_tokens"] == sum(c["input_tokens"] for c in calls)
    assert {c["condition"] for c in results["conditions"]} == {"frozen", "reflexion", "bootstrap_fewshot"}
    again = run_experiment(spec, tmp_path / "run")  # resume: nothing left to do
    assert len(store.query("SELECT id FROM calls")) == len(calls)
    assert again["conditions"] == results["conditions"]
