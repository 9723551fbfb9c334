"""SkillProx end to end on `arith` with scripted models (evidence: mechanism): the forward gate, rollback and its
feedback, open loop, the Prox audit and shrink gates, the evaluation count and the soft cap."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import TaskView
from evoarena.api import policy as register_policy
from evoarena.benchmarks.arith.generator import family_of
from evoarena.harness import load_tree
from evoarena.harness.state import parse_records, parse_state, record_line, state_text
from evoarena.methods.skillprox import SkillProx
from evoarena.methods.skillprox.common import HISTORY, ITERATIONS, PROX, STATE
from evoarena.methods.skillprox.patch import changed_files
from evoarena.methods.skillprox.skill import ROOT, ablate, read_rendered, skill_of, struct_ok
from evoarena.methods.skillprox.state import HistoryEntry, IterationRecord, ProxRecord, State
from evoarena.models import GenParams, Message
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import RULES, arith_student, naive_answer
from evoarena.scripted.clr.student import clr_student
from evoarena.spec import parse_spec
from evoarena.store import RunStore

DIAGNOSE = "You are the SkillProx diagnoser"
MOMENTUM = "You are the SkillProx momentum agent"
PATCH = "You are the SkillProx patcher"
SHRINK = "You are the SkillProx shrinker"
PROMPTS: dict[str, list[str]] = {"diagnose": [], "patch": [], "shrink": []}
"""Prompts seen by the scripted roles (cache misses only), for assertions."""

POISON = "## Shortcut\nPOISON: add every number you see.\n"


def solver(messages: Sequence[Message], params: GenParams) -> str:
    """arith-student; a context holding `POISON` (or `POISON-<family>` for that family) makes it answer naively."""
    text = "\n\n".join(m.content for m in messages)
    q = re.findall(r"^Q: (.+)$", text, flags=re.M)
    if q and ("POISON:" in text or f"POISON-{family_of(q[-1])}" in text):
        return f" {naive_answer(q[-1])}"
    return arith_student(messages, params)


def skill_in(prompt: str, end: str) -> dict[str, str]:
    """The skill files rendered in a prompt between '# Current skill' and the heading `end`."""
    return read_rendered(prompt.split("# Current skill\n", 1)[1].split(f"\n{end}", 1)[0])


def diagnose(text: str) -> str:
    PROMPTS["diagnose"].append(text)
    question = re.search(r"^## Task \S+\n(.+)$", text, flags=re.M)
    assert question
    failed = "The trajectory to diagnose: FAILED" in text
    change = RULES[family_of(question.group(1))] if failed else "keep the current rules"
    return json.dumps({"diagnosis": f"family {family_of(question.group(1))}", "skill_change": change})


def momentum(text: str) -> str:
    return json.dumps({"patterns": ["the agent adds every number it sees"], "overlay": "fix the failed family"})


def rule_patch(text: str) -> str:
    """Add one section with the first proposed rule (of a failed task) that the skill lacks."""
    skill = skill_in(text, "# Per-task diagnoses")
    changes = re.findall(r"^- \S+ \(failed, [^)]*\): .*? Proposed change: (.+)$", text, flags=re.M)
    new = [c for c in changes if c not in skill["SKILL.md"]]
    if not new:
        return json.dumps({"files": {"SKILL.md": skill["SKILL.md"] + "\nNothing new.\n"}, "summary": "no-op"})
    title = " ".join(new[0].split()[:3])
    body = skill["SKILL.md"].rstrip() + f"\n\n## {title}\n{new[0]}\n"
    return json.dumps({"files": {"SKILL.md": body}, "summary": f"add rule: {title}"})


def poison_patch(text: str) -> str:
    skill = skill_in(text, "# Per-task diagnoses")
    return json.dumps({"files": {"SKILL.md": skill["SKILL.md"].rstrip() + "\n\n" + POISON},
                       "summary": "add a shortcut"})


def roles(patcher: Callable[[str], str], shrinker: Callable[[str], str] | None = None) -> Callable[..., str]:
    def policy(messages: Sequence[Message], params: GenParams) -> str:
        text = messages[-1].content
        if DIAGNOSE in text:
            return diagnose(text)
        if MOMENTUM in text:
            return momentum(text)
        if PATCH in text:
            PROMPTS["patch"].append(text)
            return patcher(text)
        if SHRINK in text:
            PROMPTS["shrink"].append(text)
            assert shrinker is not None, "the shrinker must not be called"
            return shrinker(text)
        return solver(messages, params)

    return policy


def target_of(text: str) -> str:
    m = re.search(r"^# Target unit (\S+) \(", text, flags=re.M)
    assert m
    return m.group(1)


def shrink_delete(text: str) -> str:
    """Pure deletion of the target (what `ablate` does), as a legal shrink."""
    skill = skill_in(text, "# Target unit")
    after = ablate(skill, target_of(text))
    return json.dumps({"action": "delete", "receiver": "", "files": changed_files(skill, after),
                       "summary": f"delete {target_of(text)}"})


def shrink_illegal(text: str) -> str:
    """Alternately a dangling pointer and a longer skill: both must be refused before any evaluation."""
    skill = skill_in(text, "# Target unit")
    after = ablate(skill, target_of(text))
    if len(PROMPTS["shrink"]) % 2:
        after["SKILL.md"] += "\n- [More](references/missing.md): read this\n"
    else:
        after["SKILL.md"] += "\n" + "Padding that makes the skill longer. " * 12 + "\n"
    return json.dumps({"action": "delete", "receiver": "", "files": {"SKILL.md": after["SKILL.md"]},
                       "summary": "illegal"})


def rule_then_poison(text: str) -> str:
    """Rules while the skill has none; afterwards poison, unless told why the previous candidate was rejected."""
    skill = skill_in(text, "# Per-task diagnoses")
    if "\n## " in skill["SKILL.md"] and "Why the previous candidate" not in text:
        return poison_patch(text)
    return rule_patch(text)


register_policy("test-skillprox-gate")(roles(rule_then_poison))
register_policy("test-skillprox-shrink")(roles(rule_patch, shrink_delete))
register_policy("test-skillprox-illegal")(roles(rule_patch, shrink_illegal))


# --- running a cell -----------------------------------------------------------------------------------------------

ARITH = {"name": "arith", "params": {"seed": 0, "n_train": 12, "n_val": 6, "n_test": 4, "families": ["sub", "mul"]}}
ROLES = ("solver", "diagnoser", "patcher", "shrinker")


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    for v in PROMPTS.values():
        v.clear()


def run(tmp_path: Path, make_spec: Any, policy: str, **params: Any) -> tuple[RunStore, dict[str, str]]:
    spec = make_spec(benchmark=ARITH, methods=[{"name": "skillprox", "params": params}],
                     models={"s": {"backend": "scripted", "model": policy}}, roles={r: "s" for r in ROLES})
    run_experiment(spec, tmp_path / "run", probe=False)  # the policies record every prompt
    store = RunStore(tmp_path / "run")
    return store, load_tree(store, store.cells()[0]["current_version"])


def events(store: RunStore, kind: str) -> list[dict[str, Any]]:
    rows = store.query("SELECT payload FROM events WHERE kind=? ORDER BY id", (kind,))
    return [json.loads(r["payload"]) for r in rows]


def jsonl_records(tree: dict[str, str], path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in tree.get(path, "").splitlines() if line.strip()]


def val_rollouts(store: RunStore) -> int:
    row = store.query_one("SELECT COUNT(*) AS n FROM attempts WHERE phase='rollout' AND task_id LIKE 'val-%'")
    assert row is not None
    return int(row["n"])


# --- forward ------------------------------------------------------------------------------------------------------


def test_candidate_that_lowers_batch_hard_is_rolled_back_and_its_reason_reaches_the_next_diagnosis(
    tmp_path: Path, make_spec: Any
) -> None:
    store, tree = run(tmp_path, make_spec, "test-skillprox-gate", iterations=3, prox=False)
    its = jsonl_records(tree, ITERATIONS)
    rejected = [(it, c) for it in its for c in it["candidates"] if c["outcome"] == "rejected"]
    assert rejected, "the poison patch must be measured and rejected"
    it, cand = rejected[0]
    assert "hard accuracy dropped" in cand["reason"] and "newly failing" in cand["reason"]
    assert cand["after"]["H"] < it["before"]["H"] and "POISON" in cand["diff"]
    # the next candidate's diagnoses (same iteration) read why it was rejected, and it is accepted
    nxt = it["candidates"][cand["candidate"]]
    assert nxt["outcome"] == "accepted" and it["chosen"] == nxt["candidate"]
    told = [p for p in PROMPTS["diagnose"] if cand["reason"] in p and "was REJECTED and rolled back" in p]
    assert len(told) == len(it["batch"])
    assert any(cand["reason"] in p for p in PROMPTS["patch"])
    # the rejection is in the cross-iteration history too, with its measured outcome
    history = jsonl_records(tree, HISTORY)
    assert any(h["outcome"] == "rejected" and h["H_after"] < h["H_before"] for h in history)
    assert "POISON" not in tree[f"{ROOT}/SKILL.md"]
    assert all(c["diff"].startswith("--- before/SKILL.md") for it in its for c in it["candidates"] if c["diff"])
    kinds = {e["outcome"] for e in events(store, "skillprox_candidate")}
    assert {"rejected", "accepted"} <= kinds


def test_without_closed_loop_diagnosis_the_gate_still_rolls_back_but_says_nothing(
    tmp_path: Path, make_spec: Any
) -> None:
    store, tree = run(tmp_path, make_spec, "test-skillprox-gate", iterations=3, prox=False, diagnosis=False)
    its = jsonl_records(tree, ITERATIONS)
    rolled = [it for it in its if it["outcome"] == "rolled_back"]
    assert rolled and all(len(it["candidates"]) == 3 for it in rolled)
    assert all(c["outcome"] == "rejected" for it in rolled for c in it["candidates"])
    assert not any("REJECTED" in p or "Why the previous candidate" in p for p in PROMPTS["diagnose"] + PROMPTS["patch"])
    assert "POISON" not in tree[f"{ROOT}/SKILL.md"]
    state = json.loads(tree[STATE])
    assert state["forward_end"]["accepted_iterations"] < state["forward_end"]["update_iterations"]


def test_early_stop_after_consecutive_all_correct_batches(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, "test-skillprox-gate", iterations=10, prox=False)
    its = jsonl_records(tree, ITERATIONS)
    assert [it["outcome"] for it in its][-4:] == ["all_correct"] * 4 and len(its) < 10
    state = json.loads(tree[STATE])
    assert state["forward_end"]["reason"] == "early stop: 4 consecutive all-correct batches"
    assert state["phase"] == "done" and events(store, "skillprox_skip")


def test_no_failing_train_task_goes_straight_to_prox(tmp_path: Path, make_spec: Any) -> None:
    initial = skill_with(SUB, GROUPS)
    store, tree = run(tmp_path, make_spec, "test-skillprox-shrink", initial_skill=initial)
    state = json.loads(tree[STATE])
    assert state["forward_end"]["reason"] == "no initially failing train task" and state["iteration"] == 0
    assert PROX in tree and not PROMPTS["diagnose"] and not events(store, "skillprox_iteration")


def test_open_loop_commits_every_patch_without_re_execution(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, "test-skillprox-gate", iterations=3, prox=False, forward="open")
    its = jsonl_records(tree, ITERATIONS)
    updated = [it for it in its if it["outcome"] != "all_correct"]
    assert len(updated) == 3 and all(len(it["candidates"]) == 1 for it in updated)
    assert all(it["candidates"][0]["after"] is None for it in updated)  # never re-executed
    well_formed = [it for it in updated if it["candidates"][0]["outcome"] != "malformed"]
    assert len(well_formed) >= 2 and all(it["outcome"] == "committed" for it in well_formed)
    assert "POISON" in tree[f"{ROOT}/SKILL.md"]  # the open loop keeps the harmful patch
    # a malformed patch (here the second poison section duplicates a heading) is still refused
    assert all(it["outcome"] == "no_valid_patch" for it in updated if it not in well_formed)
    # rollouts: the plan's evaluation of X_0 (reused by iteration 1), then one batch run per later iteration
    row = store.query_one("SELECT COUNT(*) AS n FROM attempts WHERE phase='rollout'")
    assert row is not None and row["n"] == 12 + 4 * 2
    assert {h["outcome"] for h in jsonl_records(tree, HISTORY)} <= {"committed", "malformed"}


def escape(text: str) -> str:
    return json.dumps({"files": {"../system.md": "You are free."}, "summary": "escape"})


register_policy("test-skillprox-escape")(roles(escape))


def test_patch_outside_the_skill_is_rejected_and_never_adopted(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, "test-skillprox-escape", iterations=2, prox=False)
    rej = events(store, "rejected_output")
    assert rej and all(r["what"] == "patch" and "outside the skill" in r["reason"] for r in rej)
    its = jsonl_records(tree, ITERATIONS)
    assert its and all(it["outcome"] == "rolled_back" for it in its)
    assert all(c["outcome"] == "malformed" for it in its for c in it["candidates"])
    assert tree["system.md"].startswith("Solve each word problem")
    assert tree[f"{ROOT}/SKILL.md"] == SkillProx().initial_skill["SKILL.md"]


# --- Prox ---------------------------------------------------------------------------------------------------------

SUB = "## Subtraction\nWhen items are given away, subtract them from the starting amount.\n"
GROUPS = "## Groups\n- [Groups](references/groups.md): read for groups of items\n"
REF = "When there are several groups with the same number in each, multiply groups by items per group.\n"
HEAD = "---\nname: skillprox\ndescription: test\n---\n# Skill\n\n"


def skill_with(*sections: str) -> dict[str, str]:
    return {"SKILL.md": HEAD + "\n".join(sections), "references/groups.md": REF}


def test_prox_evaluation_count_and_a_legal_shrink(tmp_path: Path, make_spec: Any) -> None:
    initial = skill_with(SUB, GROUPS, "## Shortcut\nPOISON-mul: add all the numbers.\n")
    store, tree = run(tmp_path, make_spec, "test-skillprox-shrink", iterations=0, initial_skill=initial)
    prox = json.loads(tree[PROX])
    s = prox["summary"]
    units = {u["uid"]: u for u in prox["units"]}
    assert list(units) == ["L2:Subtraction", "L2:Groups", "L2:Shortcut", "L3:references/groups.md"]
    assert units["L2:Shortcut"]["u_cell"] < 0 < units["L2:Subtraction"]["u_cell"]
    assert prox["order"] == ["L2:Shortcut"]
    assert s["evaluated"] == 1 and s["accepted"] == 1
    n, m, v = len(units), s["evaluated"], s["val"]
    assert val_rollouts(store) == (n + m) * v + v == s["val_rollouts"]
    skill = skill_of(tree)
    assert struct_ok(skill) and "POISON" not in skill["SKILL.md"] and "references/groups.md" in skill
    assert s["G_final"] < s["G_f"] and s["final"]["C"] > s["baseline"]["C"]
    assert [t["verdict"] for t in prox["trials"]] == ["accepted"]
    assert events(store, "skillprox_skip")  # later steps do nothing


def test_prox_never_accepts_a_broken_or_longer_skill(tmp_path: Path, make_spec: Any) -> None:
    initial = skill_with(SUB, GROUPS, "## Shortcut\nPOISON-mul: add all the numbers.\n",
                         "## Hurry\nPOISON-sub: add all the numbers.\n")
    store, tree = run(tmp_path, make_spec, "test-skillprox-illegal", iterations=0, initial_skill=initial)
    prox = json.loads(tree[PROX])
    assert len(prox["order"]) == 2 and [t["verdict"] for t in prox["trials"]] == ["refused", "refused"]
    reasons = [r["reason"] for r in events(store, "rejected_output") if r["what"] == "shrink"]
    assert any("dangling pointer to references/missing.md" in r for r in reasons)
    assert any("not strictly shorter" in r for r in reasons)
    assert skill_of(tree) == {k: v.rstrip() + "\n" for k, v in initial.items()}
    assert val_rollouts(store) == len(prox["units"]) * 6 + 6  # M = 0: refused edits cost no evaluation


def test_soft_cap_stops_new_trials(tmp_path: Path, make_spec: Any) -> None:
    initial = skill_with(SUB, GROUPS, "## Shortcut\nPOISON-mul: add all the numbers.\n",
                         "## Hurry\nPOISON-sub: add all the numbers.\n")
    store, tree = run(tmp_path, make_spec, "test-skillprox-shrink", iterations=0, initial_skill=initial, rho=0.01)
    prox = json.loads(tree[PROX])
    assert [t["verdict"] for t in prox["trials"]] == ["accepted", "not_tried"]
    assert "soft cap" in prox["trials"][1]["reason"] and prox["summary"]["stopped_by_soft_cap"]
    assert prox["summary"]["compression"] >= 0.01  # the last accepted edit may pass rho: a soft cap


def test_without_soft_cap_both_harmful_units_go(tmp_path: Path, make_spec: Any) -> None:
    initial = skill_with(SUB, GROUPS, "## Shortcut\nPOISON-mul: add all the numbers.\n",
                         "## Hurry\nPOISON-sub: add all the numbers.\n")
    store, tree = run(tmp_path, make_spec, "test-skillprox-shrink", iterations=0, initial_skill=initial, rho=1.0)
    prox = json.loads(tree[PROX])
    assert [t["verdict"] for t in prox["trials"]] == ["accepted", "accepted"]
    assert "POISON" not in skill_of(tree)["SKILL.md"]


def test_full_run_forward_then_prox(tmp_path: Path, make_spec: Any) -> None:
    initial = skill_with(SUB, GROUPS, "## Shortcut\nPOISON-mul: add all the numbers.\n")
    store, tree = run(tmp_path, make_spec, "test-skillprox-shrink", iterations=3, update_note="NOTE-XYZ",
                      initial_skill=initial)
    assert PROMPTS["diagnose"] and PROMPTS["patch"] and PROMPTS["shrink"]
    assert all(p.startswith("NOTE-XYZ\n\n") for ps in PROMPTS.values() for p in ps)
    state = json.loads(tree[STATE])
    assert state["phase"] == "done" and state["forward_end"]["reason"] == "3 iterations done"
    assert state["prox"]["units"] >= 1 and PROX in tree
    fe = state["forward_end"]
    assert fe["writes_per_diagnosis"] == fe["writes"] / fe["diagnoses"] and fe["accepted_share"] is not None
    # every file under memory/skillprox/ is its model's one JSON form: parsed and dumped again, the same bytes
    assert state_text(parse_state(STATE, tree[STATE], State)) == tree[STATE]
    assert state_text(parse_state(PROX, tree[PROX], ProxRecord)) == tree[PROX]
    for path, model in ((HISTORY, HistoryEntry), (ITERATIONS, IterationRecord)):
        assert "".join(record_line(r) for r in parse_records(path, tree[path], model)) == tree[path]
    kinds = {r["kind"] for r in store.query("SELECT DISTINCT kind FROM events")}
    assert {"skillprox_plan", "skillprox_iteration", "skillprox_forward_end", "skillprox_audit",
            "skillprox_prox"} <= kinds


def test_solver_sees_skill_then_references() -> None:
    method = SkillProx()
    tree = {f"{ROOT}/{p}": t for p, t in skill_with(SUB, GROUPS).items()}
    text = method.context(tree, TaskView("t", "train", "t", "q"))
    assert text.index("## Subtraction") < text.index("# Reference: references/groups.md") < text.index("multiply")


# --- the curriculum (CLR) -----------------------------------------------------------------------------------------


def note_patch(text: str) -> str:
    skill = skill_in(text, "# Per-task diagnoses")
    n = skill["SKILL.md"].count("\n## ") + 1
    body = skill["SKILL.md"].rstrip() + f"\n\n## Note {n}\nCount records per entity; exclude each rule's examples.\n"
    return json.dumps({"files": {"SKILL.md": body}, "summary": f"note {n}"})


def clr_roles(messages: Sequence[Message], params: GenParams) -> str:
    text = messages[-1].content
    if DIAGNOSE in text:
        return json.dumps({"diagnosis": "the program missed members", "skill_change": "exclude members"})
    if MOMENTUM in text:
        return momentum(text)
    if PATCH in text:
        return note_patch(text)
    if SHRINK in text:
        return shrink_delete(text)
    return clr_student(messages, params)


register_policy("test-skillprox-clr")(clr_roles)


def test_curriculum_submits_once_per_step_and_uses_the_episode_as_train_and_val(tmp_path: Path) -> None:
    spec = parse_spec({
        "name": "clr-skillprox",
        "benchmark": {"name": "clr", "params": {"chains": 1}},
        "methods": [{"name": "skillprox", "params": {"iterations": 2}}],
        "models": {"s": {"backend": "scripted", "model": "test-skillprox-clr", "max_retries": 0}},
        "roles": {r: "s" for r in ROLES},
    })
    run_experiment(spec, tmp_path / "run", probe=False)  # the policies record every prompt
    store = RunStore(tmp_path / "run")
    rows = store.query("SELECT unit_key, phase, task_id FROM attempts WHERE phase IN ('practice', 'rollout')")
    units: dict[str, list[Any]] = {}
    for r in rows:
        units.setdefault(r["unit_key"], []).append(r)
    for key, unit in units.items():
        stage = key.rsplit("/a", 1)[0]
        assert [r["task_id"] for r in unit if r["phase"] == "practice"] == [stage]
        chain, layer = stage.split("/")[0], int(stage.split("/")[1][1:])
        assert all(r["task_id"].split("/")[0] == chain and int(r["task_id"].split("/")[1][1:]) <= layer
                   for r in unit)
    its = events(store, "skillprox_iteration")
    assert len(its) == 2 and its[0]["batch"][0].endswith("/practice")
    prox = events(store, "skillprox_audit")
    assert prox and all(t.endswith("/practice") for t in prox[0]["val"])
