"""GEPA's update logic with scripted models (evidence: mechanism)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import policy
from evoarena.benchmarks.arith.generator import family_of
from evoarena.harness import load_tree
from evoarena.harness.state import state_text
from evoarena.methods.gepa.method import SAME
from evoarena.methods.gepa.pool import POOL, read_pool
from evoarena.methods.replies import parse_instruction
from evoarena.models import GenParams, Message
from evoarena.protocol.catalog import build_method
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import RULES, arith_student
from evoarena.store import RunStore, queries

MARK = "I provided an assistant with the following instructions"
SEED = "Solve each word problem. Reply with the final answer as a single number.\n"


def _instruction(text: str) -> str:
    return text.split("```", 2)[1].strip()


@policy("test-gepa-same")
def same_proposer(messages: Sequence[Message], params: GenParams) -> str:
    text = messages[-1].content
    if MARK in text:
        return f"```\n{_instruction(text)}\n```"
    return arith_student(messages, params)


@policy("test-gepa-improve")
def improving_proposer(messages: Sequence[Message], params: GenParams) -> str:
    text = messages[-1].content
    if MARK in text:
        inputs = re.findall(r"^## Inputs\n(.+)$", text, flags=re.M)
        rules = sorted({RULES[family_of(q)] for q in inputs})
        return "New instruction:\n```text\n" + "\n".join([_instruction(text), *rules]) + "\n```\n"
    return arith_student(messages, params)


@policy("test-gepa-malformed")
def malformed_proposer(messages: Sequence[Message], params: GenParams) -> str:
    if MARK in messages[-1].content:
        return "Just add numbers carefully."
    return arith_student(messages, params)


@policy("test-gepa-unfenced")
def unfenced_proposer(messages: Sequence[Message], params: GenParams) -> str:
    """The improving proposer's rules with no fence around them (what the 1.5B wrote on reasoning_gym)."""
    text = messages[-1].content
    if MARK in text:
        inputs = re.findall(r"^## Inputs\n(.+)$", text, flags=re.M)
        return "\n".join([_instruction(text), *sorted({RULES[family_of(q)] for q in inputs})]) + "\n"
    return arith_student(messages, params)



def run(tmp_path: Path, make_spec: Any, policy: str, **params: Any) -> tuple[RunStore, dict[str, str]]:
    spec = make_spec(methods=[{"name": "gepa", "params": params}],
                     models={"s": {"backend": "scripted", "model": policy}}, roles={"solver": "s", "proposer": "s"})
    run_experiment(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    return store, load_tree(store, store.cells()[0]["current_version"])


def iterations(store: RunStore) -> list[dict[str, Any]]:
    rows = store.query("SELECT payload FROM events WHERE kind='gepa_iteration'")
    return [json.loads(r["payload"]) for r in rows]


def test_a_child_identical_to_its_parent_is_skipped_unpaid(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, "test-gepa-same")
    its = iterations(store)
    skipped = [i for i in its if i.get("skipped") == SAME]
    proposals = [c for c in queries.calls(store, phase="practice") if c.role == "proposer"]
    assert proposals and len(skipped) == len(proposals)  # every proposal copied its parent: none evaluated
    assert not any("after" in i for i in its)
    solver = [c for c in queries.calls(store, phase="practice") if c.role == "solver"]
    assert len(solver) == 5 + 3 * 6  # the seed on val once, the parent on each step's minibatch: no child rollouts
    kinds = [e.payload["kind"] for e in queries.events(store, ["rejected_output"])]
    assert kinds == ["duplicate"] * len(proposals)
    view = json.loads((tmp_path / "run" / "results.json").read_text())["views"]["gepa"]["cells"]
    assert [(c["identical"], c["iterations"]) for c in view] == [(len(proposals), 0)]  # counted as skips
    pool = read_pool(tree)
    assert pool is not None and [c.id for c in pool.candidates] == ["c0"]
    assert tree["system.md"] == SEED
    intents = [json.loads(r["manifest"])["intent"] for r in store.query("SELECT manifest FROM harness_versions")]
    assert not any(i.startswith("GEPA: accept") for i in intents)


def test_improving_child_is_accepted_and_evaluated_on_val(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, "test-gepa-improve")
    assert any(i.get("accepted") and sum(i["after"]) > sum(i["before"]) for i in iterations(store))
    pool = read_pool(tree)
    assert pool is not None and len(pool.candidates) >= 2
    val_ids = set(pool.candidates[0].scores)
    assert val_ids and all(set(c.scores) == val_ids for c in pool.candidates)
    child = pool.candidates[1]
    assert child.parent == "c0" and child.components["system.md"] != SEED
    best = max(pool.candidates, key=lambda c: sum(c.scores.values()))
    assert tree["system.md"] == best.components["system.md"]
    assert sum(best.scores.values()) > sum(pool.candidates[0].scores.values())
    assert state_text(pool) == tree[POOL]  # the pool file is the one JSON form of its model


def test_unfenced_reply_is_the_instruction_as_released(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, "test-gepa-unfenced")
    assert not store.query("SELECT payload FROM events WHERE kind='rejected_output'")
    assert any(i.get("accepted") for i in iterations(store))
    assert tree["system.md"] != SEED and tree["system.md"].startswith(SEED.strip())


def test_unfenced_reply_is_refused_when_strict(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, "test-gepa-malformed", fences="strict")
    events = store.query("SELECT payload FROM events WHERE kind='rejected_output'")
    assert events
    payload = json.loads(events[0]["payload"])
    assert payload["what"] == "instruction" and "fenced" in payload["reason"]
    pool = read_pool(tree)
    assert pool is not None and len(pool.candidates) == 1 and tree["system.md"] == SEED
    assert POOL in tree


def test_parse_instruction() -> None:
    assert parse_instruction("x\n```\nDo it.\n```\ny") == ("Do it.\n", "")
    assert parse_instruction("```markdown\nDo it.\nWell.\n```") == ("Do it.\nWell.\n", "")
    assert parse_instruction("``` ```")[0] is None
    assert parse_instruction("no fence", "strict")[0] is None
    # as GEPA's output_extractor: without a fenced pair, the whole reply minus a lone opening or closing fence
    assert parse_instruction("  Add first.\n") == ("Add first.\n", "")
    assert parse_instruction("```markdown\nDo it.\nWell.") == ("Do it.\nWell.\n", "")
    assert parse_instruction("Do it.\n```") == ("Do it.\n", "")
    assert parse_instruction("```\n")[0] is None and parse_instruction("   ")[0] is None


def test_fences_must_be_known() -> None:
    with pytest.raises(ValueError, match="fences"):
        build_method("gepa", {"fences": "loose"})


def test_merge_is_off_by_default_as_gepa_optimize() -> None:
    """gepa 0.1.4 `api.py` line 68: `optimize(use_merge=False, max_merge_invocations=5, merge_val_overlap_floor=5)`."""
    params = build_method("gepa", {}).params
    assert (params.use_merge, params.max_merge_invocations, params.merge_val_overlap_floor) == (False, 5, 5)
