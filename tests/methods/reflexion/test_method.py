"""Reflexion's update logic with scripted models (evidence: mechanism)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import policy
from evoarena.methods.reflexion.method import MEMORY, read_reflections
from evoarena.models import GenParams, Message
from evoarena.protocol.catalog import build_method
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import arith_student
from evoarena.store import RunStore


@policy("test-empty-reflector")
def empty_reflector(messages: Sequence[Message], params: GenParams) -> str:
    if messages[-1].content.rstrip().endswith("Reflection:"):
        return "   "
    return arith_student(messages, params)


@policy("test-rambling-reflector")
def rambling_reflector(messages: Sequence[Message], params: GenParams) -> str:
    if messages[-1].content.rstrip().endswith("Reflection:"):
        return " ".join(["because"] * (params.max_tokens + 50))  # runs past max_tokens
    return arith_student(messages, params)


def reflexion_spec(make_spec: Any, policy: str, **params: Any) -> Any:
    return make_spec(methods=[{"name": "reflexion", "params": params}],
                     models={"s": {"backend": "scripted", "model": policy}}, roles={"solver": "s", "reflector": "s"})


def final_tree(run_dir: Path) -> dict[str, str]:
    store = RunStore(run_dir)
    from evoarena.harness import load_tree

    cell = store.cells()[0]
    return load_tree(store, cell["current_version"])


def test_reflections_are_added_after_failures_and_bounded(tmp_path: Path, make_spec: Any) -> None:
    run_experiment(reflexion_spec(make_spec, "arith-student", max_reflections=2), tmp_path / "run")
    reflections = read_reflections(final_tree(tmp_path / "run"))
    assert 1 <= len(reflections) <= 2
    store = RunStore(tmp_path / "run")
    manifests = [json.loads(r["manifest"]) for r in store.query("SELECT manifest FROM harness_versions")]
    assert any(m["intent"].startswith("add reflections") and m["expected_fixes"] for m in manifests)


@pytest.mark.parametrize("policy", ["test-empty-reflector", "test-rambling-reflector"])
def test_malformed_reflections_are_recorded_and_never_adopted(tmp_path: Path, make_spec: Any, policy: str) -> None:
    run_experiment(reflexion_spec(make_spec, policy, max_tokens=20), tmp_path / "run")
    assert MEMORY not in final_tree(tmp_path / "run")
    events = RunStore(tmp_path / "run").query("SELECT payload FROM events WHERE kind='rejected_output'")
    assert events
    payload = json.loads(events[0]["payload"])
    assert payload["what"] == "reflection" and payload["reason"]


def test_unknown_method_params_are_refused() -> None:
    with pytest.raises(ValueError, match=r"reflexion\.params: unknown param .max_trail. — did you mean 'max_trials'\?"):
        build_method("reflexion", {"max_trail": 3})
