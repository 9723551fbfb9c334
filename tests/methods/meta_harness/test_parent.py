"""Meta-Harness's parent: the frontier candidate the proposal names in `base_system` (the released loop), else the
frontier's most accurate (`parent: best`), checked against the sources and end to end with a scripted proposer."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import policy
from evoarena.harness import load_tree
from evoarena.methods.meta_harness.history import ROOT
from evoarena.methods.meta_harness.method import parent_of
from evoarena.models import GenParams, Message
from evoarena.protocol.catalog import build_method
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import RULES, arith_student
from evoarena.store import RunStore

JOB = "Your job for this candidate:"
OFFER = 'Add "base_system": the id of the frontier candidate your files edit, one of '


def test_the_release_lets_the_proposal_name_its_base_from_the_frontier() -> None:
    """stanford-iris-lab/meta-harness @19574ee, text_classification SKILL.md: the proposer reads `frontier_val.json`,
    copies "a top-performing base system" and names it in its pending entry's `base_system`; seeds-digest-batch2.md
    §2 (a): selection by the Pareto frontier of performance vs context cost. A name off the frontier, or none, falls
    back to the frontier's most accurate."""
    front = ["c0", "c2"]
    assert parent_of({"base_system": "c0"}, front, "c2", "base_system") == "c0"
    assert parent_of({"base_system": " c0 "}, front, "c2", "base_system") == "c0"
    assert parent_of({"base_system": "c1"}, front, "c2", "base_system") == "c2"  # dominated: not a parent
    assert parent_of({}, front, "c2", "base_system") == "c2"
    assert parent_of({"base_system": "c0"}, front, "c2", "best") == "c2"
    assert build_method("meta_harness", {}).params.parent == "base_system"


def test_bad_parent_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="methods.meta_harness.params.parent"):
        build_method("meta_harness", {"parent": "random"})


def _final(files: dict[str, str], **extra: str) -> str:
    return "FINAL:\n```json\n" + json.dumps({"name": "n", "hypothesis": "h", "changes": "c",
                                             "expected_efficiency": "e", "files": files, **extra}) + "\n```"


@policy("test-mh-base")
def proposer(messages: Sequence[Message], params: GenParams) -> str:
    """Iteration 1 adds every rule as a note (c1: more accurate, longer, so c0 and c1 are both on the frontier);
    iteration 2 names the short seed c0 as its base instead of the best, with a note of its own."""
    text = messages[-1].content
    if JOB not in text:
        return arith_student(messages, params)
    if "c1: accuracy" in text:  # iteration 2: the prompt's inline history holds c1
        return _final({"memory/short.md": "Be brief."}, base_system="c0")
    return _final({"memory/rules.md": "\n".join(RULES.values())})


@pytest.mark.parametrize(("rule", "parent", "kept"), [("base_system", "c0", False), ("best", "c1", True)])
def test_a_proposal_edits_the_base_it_names(tmp_path: Path, make_spec: Any, rule: str, parent: str,
                                            kept: bool) -> None:
    """The candidate of iteration 2 is its parent's files plus what it wrote: the named frontier member under the
    released rule (its summary line and archive parent say so), the best under `parent: best`."""
    spec = make_spec(methods=[{"name": "meta_harness", "params": {"parent": rule, "max_iterations": 2,
                                                                  "candidates_per_iteration": 1,
                                                                  "max_tool_calls": 0}}],
                     models={"s": {"backend": "scripted", "model": "test-mh-base"}},
                     roles={"solver": "s", "proposer": "s"})
    run_experiment(spec, tmp_path / "run", probe=False)
    store = RunStore(tmp_path / "run")
    tree = load_tree(store, store.cells()[0]["current_version"])
    front = {r["candidate"] for r in json.loads(tree[ROOT + "frontier.json"])}
    assert {"c0", "c1"} <= front
    entries = [json.loads(line) for line in tree[ROOT + "summary.jsonl"].splitlines()]
    assert [(e["candidate"], e.get("parent")) for e in entries] == [("c0", None), ("c1", "c0"), ("c2", parent)]
    files = {k.split("/files/", 1)[1] for k in tree if k.startswith(ROOT + "candidates/c2/files/")}
    assert "memory/short.md" in files and ("memory/rules.md" in files) is kept
    prompts = [m.content for r in store.query("SELECT request_blob FROM calls WHERE role='proposer'")
               for m in store.get_request(r["request_blob"])]
    assert any(OFFER in p for p in prompts) is (rule == "base_system")
