"""reasoning_gym end to end on the real Qwen2.5-Coder-0.5B-Instruct (`--model embedded-small`): three
basic_arithmetic tasks (one each of train, val and test) solved, parsed and graded by the dataset's score_answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from evoarena.protocol.runner import run_experiment
from evoarena.spec import parse_spec
from evoarena.store import RunStore

pytestmark = pytest.mark.embedded


@pytest.mark.timeout(300)
def test_three_basic_arithmetic_tasks_on_the_small_embedded_model(tmp_path: Path) -> None:
    spec = parse_spec({
        "name": "rg-embedded",
        "benchmark": {"name": "reasoning_gym", "params": {
            "dataset": "basic_arithmetic", "config": {"max_terms": 2, "max_digits": 1},
            "n_train": 1, "n_val": 1, "n_test": 1, "max_tokens": 160}},
        "methods": [{"name": "frozen"}],
        "models": {"scripted": {"backend": "scripted", "model": "echo"}},
        "roles": {"solver": "scripted"},
    }).with_model("embedded-small")
    results = run_experiment(spec, tmp_path / "run", probe=False)
    assert results["evidence"] == "scaled"
    test = results["conditions"][0]["test"]
    assert (test["n_graded"], test["n_errors"]) == (1, 0)
    store = RunStore(tmp_path / "run")
    calls = store.query("SELECT model_id, prompt_format, output_tokens, error FROM calls")
    assert len(calls) == 3 and all(c["error"] is None and c["output_tokens"] > 0 for c in calls)
    assert {c["prompt_format"] for c in calls} == {"chat-template"}
    assert all(c["model_id"].startswith("embedded:qwen2.5-coder-0.5b-instruct") for c in calls)
    rows = store.query("SELECT answer, parse_error, score FROM attempts")
    assert len(rows) == 3
    # every graded row is either parsed from <answer> tags and scored by the dataset, or a parse error scored 0
    assert all((r["answer"] is None) == (r["parse_error"] is not None) for r in rows)
    assert all(0.0 <= r["score"] <= 1.0 for r in rows)
