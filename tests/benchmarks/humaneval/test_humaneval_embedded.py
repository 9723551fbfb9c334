"""humaneval end to end on the real Qwen2.5-Coder-0.5B-Instruct (`--model embedded-small`): three problems (one each
of train, val and test) answered with code that is parsed and run with its hidden test in the sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from evoarena.protocol.runner import run_experiment
from evoarena.spec import parse_spec
from evoarena.store import RunStore

pytestmark = pytest.mark.embedded

KNOWN = ("All tests passed.", "Hidden test assertion", "The function raised", "The test raised",
         "The code does not run",
         "Timed out", "The program stopped", "No code was found")


@pytest.mark.timeout(600)
def test_three_problems_on_the_small_embedded_model(tmp_path: Path) -> None:
    spec = parse_spec({
        "name": "he-embedded",
        "benchmark": {"name": "humaneval", "params": {"n_train": 1, "n_val": 1, "n_test": 1, "max_tokens": 256}},
        "methods": [{"name": "frozen"}],
        "models": {"scripted": {"backend": "scripted", "model": "echo"}},
        "roles": {"solver": "scripted"},
    }).with_model("embedded-small")
    results = run_experiment(spec, tmp_path / "run", probe=False)
    assert results["evidence"] == "scaled"
    test = results["conditions"][0]["test"]
    assert (test["n_graded"], test["n_errors"]) == (1, 0)
    store = RunStore(tmp_path / "run")
    calls = store.query("SELECT role, model_id, error FROM calls")
    assert len(calls) == 3
    assert all(c["error"] is None and c["model_id"].startswith("embedded:qwen2.5-coder-0.5b") for c in calls)
    rows = store.query("SELECT phase, answer, parse_error, score FROM attempts")
    assert {"practice", "select", "test"} <= {r["phase"] for r in rows}
    assert all(r["answer"] and "return" in r["answer"] for r in rows)  # a coder model writes code for each
    assert all(r["score"] in (0.0, 1.0) for r in rows)
    from evoarena.benchmarks.humaneval import HumanEvalBenchmark

    bench = HumanEvalBenchmark(n_train=1, n_val=1, n_test=1)
    tasks = {t.id: t for t in bench.build()}
    graded = store.query("SELECT task_id, answer, score FROM attempts WHERE phase='test'")[0]
    again = bench.grade(tasks[graded["task_id"]], graded["answer"])  # the same verdict when graded again here
    assert again.score == graded["score"] and again.message.startswith(KNOWN)
