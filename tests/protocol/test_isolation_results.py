"""A method in a process of its own gives the science it gives in-process: arith-basics and clr-methods (two
chains, all 21 conditions) under `protocol.isolation: process` match the pinned in-process results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from own_process import own_process, strongest
from test_results_pinned import GOLDEN, narrowed, normalised

from evoarena.protocol.run.runner import run_experiment

IDENTITY = {"spec_hash", "run_id", "method_isolation"}  # the isolation setting is part of the spec


def without_identity(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_identity(v) for k, v in value.items() if k not in IDENTITY}
    if isinstance(value, list):
        return [without_identity(v) for v in value]
    return value


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", ["arith-basics", "clr-methods"])
def test_isolated_methods_give_the_pinned_results(name: str, tmp_path: Path) -> None:
    spec = narrowed(name)
    spec = spec.model_copy(update={"protocol": spec.protocol.model_copy(update=own_process())})
    results = run_experiment(spec, tmp_path / "run")
    assert results["meta"]["extra"]["method_isolation"]["mode"] == "process"
    assert results["meta"]["extra"]["method_isolation"]["levels"] == [strongest()]
    got = without_identity(normalised(results))
    want = without_identity(json.loads((GOLDEN / f"{name}.json").read_text("utf-8")))
    assert json.dumps(got, sort_keys=True, indent=1) == json.dumps(want, sort_keys=True, indent=1)
