"""Methods whose iteration needs internal evaluations (GEPA, EvoSkill, TF-GRPO) under CLR's curriculum: one
submitted attempt per step, the rest as rollouts on the episode's own stages so far (evidence: mechanism)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import policy
from evoarena.models import GenParams, Message
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.clr.student import clr_student
from evoarena.spec import parse_spec
from evoarena.store import RunStore


@policy("test-clr-updater")
def clr_updater(messages: Sequence[Message], params: GenParams) -> str:
    """clr-student as solver; a fixed well-formed answer for GEPA's proposer and EvoSkill's two roles."""
    text = messages[-1].content
    if text.startswith("I provided an assistant"):
        return "```\nCount records per entity; exclude each rule's example values.\n```"
    if text.startswith("You improve an agent"):
        return json.dumps({"action": "create", "target_skill": "exclusions", "justification": "failures",
                           "proposed_skill": "exclude the example values"})
    if text.startswith("Write a skill file"):
        return "---\nname: exclusions\ndescription: exclusions\n---\nExclude the example values.\n"
    return clr_student(messages, params)


def run(tmp_path: Path, method: dict[str, Any], roles: Sequence[str]) -> RunStore:
    spec = parse_spec({
        "name": "clr-fit",
        "benchmark": {"name": "clr", "params": {"chains": 1}},
        "methods": [method],
        "models": {"s": {"backend": "scripted", "model": "test-clr-updater", "max_retries": 0}},
        "roles": {r: "s" for r in roles},
    })
    run_experiment(spec, tmp_path / "run")
    return RunStore(tmp_path / "run")


def kinds(store: RunStore) -> set[str]:
    return {r["kind"] for r in store.query("SELECT DISTINCT kind FROM events")}


def check_units(store: RunStore) -> list[Any]:
    """Every practice unit submitted exactly one attempt; rollouts only touched its episode's stages so far."""
    rows = store.query("SELECT unit_key, phase, task_id FROM attempts WHERE phase IN ('practice', 'rollout')")
    units: dict[str, list[Any]] = {}
    for r in rows:
        units.setdefault(r["unit_key"], []).append(r)
    assert units
    for key, unit in units.items():
        stage_task = key.rsplit("/a", 1)[0]
        assert [r["task_id"] for r in unit if r["phase"] == "practice"] == [stage_task]
        chain, layer = stage_task.split("/")[0], int(stage_task.split("/")[1][1:])
        for r in unit:
            assert r["task_id"].split("/")[0] == chain and int(r["task_id"].split("/")[1][1:]) <= layer
    return rows


@pytest.mark.parametrize(
    ("method", "roles", "event"),
    [
        ({"name": "gepa"}, ("solver", "proposer"), "gepa_iteration"),
        ({"name": "evoskill"}, ("solver", "proposer", "skill_writer"), "evoskill_iteration"),
    ],
)
def test_search_methods_iterate_under_the_curriculum(tmp_path: Path, method: dict[str, Any],
                                                    roles: Sequence[str], event: str) -> None:
    store = run(tmp_path, method, roles)
    assert event in kinds(store)
    skips = store.query("SELECT payload FROM events WHERE kind IN ('gepa_skip', 'evoskill_skip')")
    assert not any("attempt_limit" in r["payload"] for r in skips)  # skips only for the method's own reasons
    rows = check_units(store)
    assert any(r["phase"] == "rollout" for r in rows)
    # earlier stages of the episode are evaluated too (the valset grows with the curriculum)
    assert any(r["phase"] == "rollout" and "/L1/" in r["task_id"] and "/L2/" in r["unit_key"] for r in rows)


def test_tf_grpo_group_is_one_submission_and_three_rollouts(tmp_path: Path) -> None:
    store = run(tmp_path, {"name": "tf_grpo", "params": {"group_size": 4}},
                ("solver", "summarizer", "critic", "updater"))
    rows = check_units(store)
    per_unit: dict[str, int] = {}
    for r in rows:
        per_unit[r["unit_key"]] = per_unit.get(r["unit_key"], 0) + 1
    assert set(per_unit.values()) == {4}
    assert "tf_grpo_group_capped" not in kinds(store)


def test_calls_and_events_carry_their_unit_key(tmp_path: Path) -> None:
    store = run(tmp_path, {"name": "gepa"}, ("solver", "proposer"))
    units = {r["key"] for r in store.query("SELECT key FROM units")}
    calls = store.query("SELECT unit, phase FROM calls WHERE cell IS NOT NULL")  # role probes run in no cell
    assert calls and all(c["unit"] in units for c in calls)
    assert {c["unit"].split("/")[0] for c in calls if c["phase"] == "test"} == {"test"}
    events = store.query("SELECT unit FROM events WHERE kind LIKE 'gepa_%'")
    assert events and all(e["unit"] in units for e in events)
