"""Autogenesis with scripted models (evidence: mechanism): the registry's versions, statuses and restore; the
learnability mask (resources and prompt sections) enforced on the reflection's choice; `rollback: never` keeps a
worse version as released, `gated` restores the previous one and archives the new."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import policy
from evoarena.benchmarks.arith.generator import family_of
from evoarena.harness import load_tree
from evoarena.methods.autogenesis.method import STATE
from evoarena.methods.autogenesis.registry import Registry, RegistryError, join_sections, sections
from evoarena.models import GenParams, Message
from evoarena.protocol.catalog import build_method
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import RULES, arith_student
from evoarena.store import RunStore

REFLECT = "Reflect on what went wrong"
IMPROVE = "Write the complete new text of"


def _failed_rule(text: str) -> str:
    for block in text.split("## Task ")[1:]:
        head, _, body = block.partition("\n")
        if "failed" in head:
            return RULES[family_of(body.split("\nOutput:", 1)[0].strip())]
    return "Check each step."


def _proposer(target: str, harmful: bool = False):  # type: ignore[no-untyped-def]
    def reply(messages: Sequence[Message], params: GenParams) -> str:
        text = messages[-1].content
        if any("NO ANSWERS" in m.content for m in messages) and REFLECT not in text and IMPROVE not in text:
            return "I will not answer."
        if REFLECT in text:
            return "```json\n" + json.dumps({"reflection": "it added instead", "resource": target, "section": "",
                                             "change": _failed_rule(text)}) + "\n```"
        if IMPROVE in text:
            current = text.split("```\n", 1)[1].split("\n```", 1)[0]
            change = text.split("Change requested: ", 1)[1].split("\n", 1)[0]
            return "```\nNO ANSWERS\n```" if harmful else f"```\n{current}\n{change}\n```"
        return arith_student(messages, params)
    return reply


policy("test-ag-memory")(_proposer("memory"))
policy("test-ag-harm")(_proposer("prompt", harmful=True))


def run(tmp_path: Path, make_spec: Any, name: str, **params: Any) -> tuple[RunStore, dict[str, str]]:
    spec = make_spec(methods=[{"name": "autogenesis", "params": params}],
                     models={"s": {"backend": "scripted", "model": name}}, roles={"solver": "s", "proposer": "s"})
    run_experiment(spec, tmp_path / "run", probe=False)
    store = RunStore(tmp_path / "run")
    return store, load_tree(store, store.cells()[0]["current_version"])


def steps(store: RunStore) -> list[dict[str, Any]]:
    return [json.loads(r["payload"]) for r in store.query("SELECT payload FROM events WHERE kind='autogenesis_step'")]


def test_memory_versions_accumulate_the_rules(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, "test-ag-memory")
    registry = Registry.loads(tree[STATE])
    memory = registry.resources["memory"]
    assert memory.current != "1.0.0" and memory.versions[0].version == "1.0.0"
    assert [v.status for v in memory.versions].count("ACTIVE") == 1
    assert memory.get(memory.current).status == "ACTIVE" and tree["memory/notes.md"] == memory.text()
    assert any(rule in tree["memory/notes.md"] for rule in RULES.values())
    assert registry.resources["prompt"].current == "1.0.0"  # untouched: the reflection never chose it


def test_never_keeps_a_worse_version_and_gated_rolls_it_back(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path / "never", make_spec, "test-ag-harm", rollback="never")
    worse = [s for s in steps(store) if sum(s["after"]) < sum(s["before"])]
    assert worse and all(s["kept"] for s in worse) and tree["system.md"].strip() == "NO ANSWERS"
    store, tree = run(tmp_path / "gated", make_spec, "test-ag-harm", rollback="gated")
    done = steps(store)
    rolled_back = {s["version"] for s in done if not s["kept"]}
    assert rolled_back and all(sum(s["after"]) < sum(s["before"]) for s in done if not s["kept"])
    assert all(s["kept"] for s in done if sum(s["after"]) >= sum(s["before"]))  # not worse: committed
    prompt = Registry.loads(tree[STATE]).resources["prompt"]
    assert {v.version for v in prompt.versions if v.status == "ARCHIVED"} == rolled_back
    assert tree["system.md"] == prompt.text() and prompt.get(prompt.current).status == "ACTIVE"


def test_the_mask_refuses_what_is_not_learnable(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, "test-ag-memory", learnable=["prompt"])
    rejected = [json.loads(r["payload"]) for r in store.query(
        "SELECT payload FROM events WHERE kind='rejected_output'")]
    assert rejected and all(r["what"] == "selection" and "not a learnable" in r["reason"] for r in rejected)
    assert Registry.loads(tree[STATE]).resources["memory"].current == "1.0.0"


def test_registry_versions_status_restore_and_sections() -> None:
    reg = Registry()
    reg.register("prompt", "prompt", "system.md", "## role\nA\n\n## rules\nB", require_grad=True, step=0,
                 sub_grad={"role": False, "rules": True})
    reg.register("memory", "memory", "memory/notes.md", "", require_grad=False, step=0)
    assert reg.set_version("prompt", "v2", step=1, description="d") == "1.0.1"
    assert reg.set_version("prompt", "v3", step=2, description="d") == "1.0.2"
    res = reg.resources["prompt"]
    assert [v.status for v in res.versions] == ["DEPRECATED", "DEPRECATED", "ACTIVE"]
    reg.restore("prompt", "1.0.0", archive_current=True)
    assert res.current == "1.0.0" and [v.status for v in res.versions] == ["ACTIVE", "DEPRECATED", "ARCHIVED"]
    with pytest.raises(RegistryError, match="not learnable"):
        reg.set_version("memory", "x", step=3, description="d")
    with pytest.raises(RegistryError, match="no version"):
        reg.restore("prompt", "9.9.9")
    again = Registry.loads(reg.dumps())
    assert again.dumps() == reg.dumps()
    parts = sections("Intro\n## Role\nA\n## rules\nB")
    assert parts == {"preamble": "Intro", "role": "A", "rules": "B"}
    assert sections(join_sections(parts)) == parts


@pytest.mark.parametrize("params", [{"learnable": ["tools"]}, {"rollback": "sometimes"}])
def test_bad_params_are_refused(params: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="methods.autogenesis.params"):
        build_method("autogenesis", params)
