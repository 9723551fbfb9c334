"""EvoSkill's update logic with scripted models (evidence: mechanism)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evoarena.api import policy
from evoarena.benchmarks.arith.generator import family_of
from evoarena.harness import load_tree
from evoarena.harness.state import state_text
from evoarena.methods.evoskill.method import (
    FRONTIER,
    HISTORY,
    Program,
    admit,
    history_line,
    parse_proposal,
    parse_skill,
    read_frontier,
    read_history,
    skills_of,
)
from evoarena.models import GenParams, Message
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import RULES, arith_student, solve_correctly
from evoarena.store import RunStore
from evoarena.store.queries import calls

PROPOSE = "Propose ONE skill change"
WRITE = "Write a skill file (SKILL.md)"


def _skill_md(prompt: str) -> str:
    name = re.search(r"^Skill name: (.+)$", prompt, flags=re.M)
    teach = re.search(r"^What the skill should teach: (.+)$", prompt, flags=re.M)
    assert name and teach
    return f"---\nname: {name.group(1)}\ndescription: use for such problems\n---\n{teach.group(1)}\n"


@policy("test-evoskill-improve")
def improving(messages: Sequence[Message], params: GenParams) -> str:
    text = messages[-1].content
    if PROPOSE in text:
        fam = family_of(re.findall(r"^### Task\n(?:Q: )?(.+)$", text, flags=re.M)[0])
        return json.dumps({"action": "create", "target_skill": fam.replace("_", "-"), "proposed_skill": RULES[fam],
                           "justification": "the failures miss this rule"})
    if WRITE in text:
        return _skill_md(text)
    return arith_student(messages, params)


@policy("test-evoskill-poison")
def poisoning(messages: Sequence[Message], params: GenParams) -> str:
    text = "\n".join(m.content for m in messages)
    if PROPOSE in text:
        n = len(re.findall(r"^- \[", text, flags=re.M))
        return json.dumps({"action": "create", "target_skill": f"poison-{n}", "proposed_skill": "POISON",
                           "justification": "x"})
    if WRITE in text:
        return _skill_md(messages[-1].content)
    if "POISON" in text:
        return " -1"
    return arith_student(messages, params)


@policy("test-evoskill-malformed")
def malformed(messages: Sequence[Message], params: GenParams) -> str:
    if PROPOSE in messages[-1].content:
        return "Add a skill about subtraction."
    return arith_student(messages, params)


@policy("test-evoskill-badskill")
def bad_skill(messages: Sequence[Message], params: GenParams) -> str:
    text = messages[-1].content
    if PROPOSE in text:
        return json.dumps({"action": "create", "target_skill": "sub", "proposed_skill": "subtract",
                           "justification": "x"})
    if WRITE in text:
        return "Subtract what is given away."
    return arith_student(messages, params)


@policy("test-evoskill-perfect")
def perfect(messages: Sequence[Message], params: GenParams) -> str:
    if PROPOSE in messages[-1].content or WRITE in messages[-1].content:
        return "not asked in practice (the role probes ask it; the test counts the calls)"
    q = re.findall(r"^Q: (.+)$", "\n".join(m.content for m in messages), flags=re.M)[-1]
    return f" {solve_correctly(q)}"



def run(tmp_path: Path, make_spec: Any, policy: str) -> tuple[RunStore, dict[str, str]]:
    spec = make_spec(methods=[{"name": "evoskill"}], models={"s": {"backend": "scripted", "model": policy}},
                     roles={"solver": "s", "proposer": "s", "skill_writer": "s"})
    run_experiment(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    return store, load_tree(store, store.cells()[0]["current_version"])


def events(store: RunStore, kind: str) -> list[dict[str, Any]]:
    return [json.loads(r["payload"]) for r in store.query("SELECT payload FROM events WHERE kind=?", (kind,))]


def test_improving_skill_is_added_and_becomes_live(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, "test-evoskill-improve")
    state = read_frontier(tree)
    assert state is not None and 2 <= len(state.programs) <= 3
    assert any(i["outcome"] == "IMPROVED" for i in events(store, "evoskill_iteration"))
    best = max(state.programs, key=lambda p: p.score)
    assert best.score > state.programs[0].score or state.programs[0].id != "p0"
    assert skills_of(tree) == best.skills and best.skills
    assert all(len(p.scores) == 5 for p in state.programs)
    assert read_history(tree) and HISTORY in tree
    # the frontier is its model's one JSON form; the history keeps its own (ordered keys, ASCII)
    assert state_text(state) == tree[FRONTIER]
    assert "".join(history_line(h) for h in read_history(tree)) == tree[HISTORY]


def test_non_improving_children_fill_the_frontier_then_are_discarded(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, "test-evoskill-poison")
    its = events(store, "evoskill_iteration")
    assert its and all(i["child_score"] <= i["parent_score"] for i in its)
    assert its[0]["outcome"] == "KEPT"  # not better than the parent (seed val = 0), still added
    assert all(len(i["frontier"]) <= 3 for i in its)
    state = read_frontier(tree)
    assert state is not None and state.programs[0].id == "p0" and len(state.programs) <= 3
    if len(its) > 2:
        assert [i["outcome"] for i in its[2:]] == ["DISCARDED"] * (len(its) - 2)
        assert len(events(store, "evoskill_discarded")) == len(its) - 2
    assert skills_of(tree) == {}  # the live skills are the best member's (the seed)


def test_acceptance_as_released() -> None:
    def prog(pid: str, score: float) -> Program:
        return Program(id=pid, parent=None, skills={}, score=score)

    progs = [prog("a", 0.5)]
    assert admit(progs, prog("b", 0.1), 3) and admit(progs, prog("c", 0.2), 3)
    assert not admit(progs, prog("d", 0.1), 3)  # ties the worst: discarded
    assert admit(progs, prog("e", 0.15), 3)  # beats the worst (b), though worse than the best
    assert [p.id for p in progs] == ["a", "e", "c"]


def test_malformed_proposal_is_rejected(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, "test-evoskill-malformed")
    rej = events(store, "rejected_output")
    assert rej and rej[0]["what"] == "proposal" and "JSON" in rej[0]["reason"]
    state = read_frontier(tree)
    assert state is not None and len(state.programs) == 1 and skills_of(tree) == {}


def test_skill_without_front_matter_is_rejected(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, "test-evoskill-badskill")
    rej = events(store, "rejected_output")
    assert rej and rej[0]["what"] == "skill" and "front matter" in rej[0]["reason"]
    assert skills_of(tree) == {} and FRONTIER in tree


def test_no_failures_skips(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, "test-evoskill-perfect")
    skips = events(store, "evoskill_skip")
    assert skips and all(s["reason"] == "no failures" for s in skips)
    assert not events(store, "evoskill_iteration") and HISTORY not in tree
    asked = [c.phase for c in calls(store) if c.role in {"proposer", "skill_writer"}]
    assert asked and set(asked) == {"probe"}  # only the role probes asked them; practice never did


def test_parsers() -> None:
    ok = '{"action": "create", "target_skill": "a-1", "proposed_skill": "x", "justification": "y"}'
    assert parse_proposal(ok, {})[0] is not None
    assert parse_proposal(ok.replace("a-1", "../etc"), {})[0] is None
    assert parse_proposal(ok.replace("create", "edit"), {})[0] is None  # edit of an unknown skill
    assert parse_proposal(ok.replace("create", "delete"), {})[0] is None
    md = "---\nname: a-1\ndescription: d\n---\nbody\n"
    assert parse_skill(f"```markdown\n{md}```", "a-1") == (md, "")
    assert parse_skill(md, "b")[0] is None
    assert parse_skill(md.replace("description: d\n", ""), "a-1")[0] is None
