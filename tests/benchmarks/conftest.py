"""Shared by the benchmarks' real-model tests: one frozen run of one task per split on `embedded-small`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import parse_spec
from evoarena.store import RunStore


@pytest.fixture
def frozen_on_embedded_small(tmp_path: Path) -> Callable[[str, dict[str, Any]], RunStore]:
    """Run `frozen` on the benchmark (one task each of train, val and test) on the real 0.5B, without probes; check
    what every such run must show (scaled evidence, the one test task graded without error, three clean calls to
    the 0.5B) and return the run store."""

    def run(name: str, benchmark: dict[str, Any]) -> RunStore:
        spec = parse_spec({
            "name": name,
            "benchmark": {"name": benchmark["name"],
                          "params": {"n_train": 1, "n_val": 1, "n_test": 1, **benchmark.get("params", {})}},
            "methods": [{"name": "frozen"}],
            "models": {"scripted": {"backend": "scripted", "model": "echo"}},
            "roles": {"solver": "scripted"},
        }).with_model("embedded-small")
        results = run_experiment(spec, tmp_path / "run", probe=False)
        assert results["evidence"] == "scaled"
        test = results["conditions"][0]["test"]
        assert (test["n_graded"], test["n_errors"]) == (1, 0)
        store = RunStore(tmp_path / "run")
        calls = store.query("SELECT model_id, output_tokens, error FROM calls")
        assert len(calls) == 3 and all(c["error"] is None and c["output_tokens"] > 0 for c in calls)
        assert all(c["model_id"].startswith("embedded:qwen2.5-coder-0.5b-instruct") for c in calls)
        return store

    return run
