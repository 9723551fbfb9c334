"""Each method's update roles played by the scripted exception-lister (evidence: mechanism): the reply passes
that method's parser and carries the revealed members, which the solver then excludes."""


from __future__ import annotations

import json
from pathlib import Path

import pytest
from clr_role_cases import (
    ACE,
    DC,
    EVOSKILL,
    GEPA,
    RB,
    REFLEXION,
    TF_GRPO,
    ace_curate_prompt,
    ask,
    assert_lists_members,
    assert_solver_excludes,
    case,
    case_view,
    executed,
    rendered_templates,
    skillprox_templates,
)

from evoarena.methods import render_prompt
from evoarena.methods.ace.playbook import Playbook, apply_operations, extract_json, render_playbook
from evoarena.methods.dynamic_cheatsheet.method import parse_sheet
from evoarena.methods.evoskill.method import parse_proposal, parse_skill
from evoarena.methods.reasoning_bank.method import parse_items, parse_judge
from evoarena.methods.reflexion.method import clean_reflection
from evoarena.methods.replies import parse_instruction
from evoarena.methods.tf_grpo.method import (
    CRITIQUE_OPS,
    UPDATE_OPS,
    Op,
    apply_ops,
    check_op,
    extract_ops,
    render_library,
)
from evoarena.scripted.clr.membership import member_line
from evoarena.scripted.clr.roles import CALLED_AS, ROLE_POLICIES, with_members


def test_reflexion_reflection() -> None:
    c = case()
    reflection, why = clean_reflection(ask(rendered_templates()[("reflexion", "reflector")]), 600)
    assert reflection is not None, why
    assert_lists_members(reflection, c.members)
    assert_solver_excludes(render_prompt(REFLEXION, "context", reflections=[reflection]), c.members)


def test_ace_reflector_and_curator_add_each_member_once() -> None:
    c = case()
    reflection = extract_json(ask(rendered_templates()[("ace", "reflector")]))
    assert reflection is not None and isinstance(reflection["bullet_tags"], list)
    assert_lists_members(reflection["key_insight"], c.members)
    pb = Playbook()
    data = extract_json(ask(ace_curate_prompt(json.dumps(reflection, indent=1), render_playbook(pb))))
    assert data is not None
    added, _ = apply_operations(pb, data["operations"], 1)
    assert len(added) == len(c.members)
    assert_lists_members(render_playbook(pb), c.members)
    again = extract_json(ask(ace_curate_prompt(json.dumps(reflection, indent=1), render_playbook(pb))))
    assert again == {"reasoning": "0 new confirmed member(s).", "operations": []}
    context = render_prompt(ACE, "context", bullets=True, playbook=render_playbook(pb), reflection="")
    assert_solver_excludes(context, c.members)


def test_ace_reflector_tags_the_bullets_it_was_shown() -> None:
    c = case()
    prompt = render_prompt(ACE, "reflect", question=c.task, output=c.program, answer=c.program, ground_truth=None,
                           feedback="All practice inputs passed.",
                           cited="[com-00001] helpful=0 harmful=0 :: Lufthansa belongs to review queue A4.")
    data = extract_json(ask(prompt))
    assert data is not None and data["bullet_tags"] == [{"id": "com-00001", "tag": "helpful"}]


def test_dynamic_cheatsheet_rewrites_the_whole_sheet_keeping_the_old_one() -> None:
    c = case()
    sheet, why = parse_sheet(ask(rendered_templates()[("dynamic_cheatsheet", "curator")]))
    assert sheet is not None, why
    assert_lists_members(sheet, c.members)
    assert_solver_excludes(render_prompt(DC, "context", sheet=sheet), c.members)
    old = with_members("Count records per entity.", c.members[:1])
    new, why = parse_sheet(ask(render_prompt(DC, "curate_cumulative", question=c.task, output=executed(c),
                                             sheet=old)))
    assert new is not None and new.startswith(old) and new.count(member_line(c.members[0])) == 1, why
    assert_lists_members(new, c.members)
    # nothing revealed (a pass, or no execution output): the sheet comes back as it was
    passed = render_prompt(DC, "curate_cumulative", question=c.task, sheet=old,
                           output=executed(c, "All practice inputs passed."))
    assert parse_sheet(ask(passed))[0] == old
    bare = render_prompt(DC, "curate_cumulative", question=c.task, output=c.program, sheet="(empty)")
    assert parse_sheet(ask(bare))[0] == "(empty)"
    # the retrieval-synthesis variant reads the members from the earlier outputs it is shown
    pairs = [{"input": c.task, "output": executed(c)}]
    rs, why = parse_sheet(ask(render_prompt(DC, "curate_rs", sheet=old, pairs=pairs, question=c.task)))
    assert rs == new, why


def test_gepa_keeps_the_instruction_and_appends_the_members() -> None:
    c = case()
    instruction, why = parse_instruction(ask(rendered_templates()[("gepa", "proposer")]))
    assert instruction is not None, why
    assert instruction.startswith(c.system.strip())
    assert_lists_members(instruction, c.members)
    assert_solver_excludes("", c.members, system=instruction)
    examples = [{"inputs": c.task, "outputs": c.program, "feedback": c.feedback}]
    again, _ = parse_instruction(ask(render_prompt(GEPA, "reflect", instruction=instruction.strip(),
                                                   examples=examples)))
    assert again == instruction  # nothing new: the same instruction


@pytest.mark.parametrize("variant", ["original", "main"])
def test_tf_grpo_summary_critique_and_update(variant: str) -> None:
    c = case()
    summary = ask(rendered_templates()[("tf_grpo", "summarizer")])
    assert_lists_members(summary, c.members)
    summaries = f"Rollout 1 (reward 0): {' '.join(summary.split())}\nRollout 2 (reward 1): No member was revealed."
    critique = render_prompt(TF_GRPO, "critique", question=c.task, experiences="(empty)", summaries=summaries,
                             max_words=32)
    ops = extract_ops(ask(critique))
    assert ops is not None and len(ops) == 1
    op, why = check_op(ops[0], CRITIQUE_OPS, 0, 32)
    assert op is not None and op.option == "add", why
    assert_lists_members(op.experience or "", c.members)
    update = render_prompt(TF_GRPO, "update", experiences="(empty)", proposed=json.dumps(ops[0]),
                           main=variant == "main", max_words=32)
    raw = extract_ops(ask(update))
    assert raw is not None
    checked = [check_op(o, UPDATE_OPS[variant], 0, 32)[0] for o in raw]
    assert all(checked)
    library = apply_ops([], [o for o in checked if o is not None])
    assert_lists_members(" ".join(library), c.members)
    assert_solver_excludes(render_prompt(TF_GRPO, "context", experiences=render_library(library)), c.members)
    # nothing new in the summaries: one no-op modify of G0
    critique = render_prompt(TF_GRPO, "critique", question=c.task, experiences=render_library(library),
                             summaries=summaries, max_words=32)
    ops = extract_ops(ask(critique))
    assert ops is not None and check_op(ops[0], CRITIQUE_OPS, 1, 32)[0] == Op(option="modify", ids=["G0"],
                                                                                experience=library[0])


def test_tf_grpo_experience_respects_the_word_limit() -> None:
    c = case()
    summaries = f"Rollout 1 (reward 0): {' '.join(ask(rendered_templates()[('tf_grpo', 'summarizer')]).split())}"
    critique = render_prompt(TF_GRPO, "critique", question=c.task, experiences="(empty)", summaries=summaries,
                             max_words=8)
    ops = extract_ops(ask(critique))
    assert ops is not None and check_op(ops[0], CRITIQUE_OPS, 0, 8)[0] is not None


def test_reasoning_bank_judge_and_items() -> None:
    c = case()
    assert parse_judge(ask(rendered_templates()[("reasoning_bank", "judge")])) == "failure"
    passed = render_prompt(RB, "judge", query=c.task, output=executed(c, "All practice inputs passed."))
    assert parse_judge(ask(passed)) == "success"
    items, why = parse_items(ask(rendered_templates()[("reasoning_bank", "inducer")]), 3)
    assert items is not None and len(items) == 2, why
    assert_lists_members(items[1].content, c.members)
    assert_solver_excludes(render_prompt(RB, "context", items=items), c.members)
    bare, why = parse_items(ask(render_prompt(RB, "induce_success", query=c.task, output=c.program)), 3)
    assert bare is not None and len(bare) == 1, why  # nothing shown, nothing listed: the strategy item only


def test_evoskill_proposes_and_writes_a_skill_then_edits_it() -> None:
    c = case()
    prop, why = parse_proposal(ask(rendered_templates()[("evoskill", "proposer")]), {})
    assert prop is not None and prop["action"] == "create", why
    assert_lists_members(prop["proposed_skill"], c.members)
    name = prop["target_skill"]
    skill, why = parse_skill(ask(render_prompt(EVOSKILL, "write", existing="", **prop)), name)
    assert skill is not None, why
    assert_lists_members(skill, c.members)
    skills = [{"name": name, "body": skill.strip()}]
    assert_solver_excludes(render_prompt(EVOSKILL, "context", skills=skills), c.members)
    failures = [{"task": c.task, "output": c.program, "feedback": c.feedback, "score": "0", "ground_truth": "",
                 "id": "x"}]
    again, why = parse_proposal(ask(render_prompt(EVOSKILL, "propose", skills=skills, history=[],
                                                  failures=failures)), {name: skill})
    assert again is not None and again["action"] == "edit", why
    edited, why = parse_skill(ask(render_prompt(EVOSKILL, "write", existing=skill, **again)), name)
    assert edited is not None and all(edited.count(member_line(m)) == 1 for m in c.members), why


def test_ace_and_dc_list_the_revealed_members_without_rejections(tmp_path: Path) -> None:
    from evoarena.harness import load_tree
    from evoarena.protocol.run.runner import run_experiment
    from evoarena.spec import parse_spec
    from evoarena.store import RunStore

    roles = {r: "s" for r in ("solver", "reflector", "curator")}
    spec = parse_spec({
        "name": "clr-roles",
        "benchmark": {"name": "clr", "params": {"chains": 1, "layers": 2}},
        "methods": [{"name": "ace", "label": "ace-self"}, {"name": "dynamic_cheatsheet",
                                                           "label": "dynamic_cheatsheet-self"}],
        "models": {"s": {"backend": "scripted", "model": "clr-student", "max_retries": 0}},
        "roles": roles,
    })
    run_experiment(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    assert not store.query("SELECT id FROM events WHERE kind='rejected_output'")
    final = {r["condition"]: load_tree(store, r["current_version"])
             for r in store.query("SELECT condition, current_version FROM cells")}
    c = case()
    assert_lists_members(final["ace-self"]["memory/playbook.md"], c.members)
    assert_lists_members(final["dynamic_cheatsheet-self"]["memory/cheatsheet.md"], c.members)
    passed = {r["cell"].split("__")[0]: r["n"] for r in store.query(
        "SELECT cell, SUM(passed) AS n FROM attempts WHERE phase='practice' GROUP BY cell")}
    assert passed["ace-self"] == passed["dynamic_cheatsheet-self"] == 2  # a listed member passes each layer


def test_the_methods_recipe_maps_every_role_and_pairs_self_with_lesson() -> None:
    from evoarena.protocol.catalog import method_class
    from evoarena.spec import load_spec

    spec = load_spec(Path(__file__).resolve().parents[2] / "recipes" / "clr-methods.yaml")
    for m in spec.methods:
        assert set(method_class(m.name).roles) <= set(spec.roles), m.condition
    assert {CALLED_AS.get(p.role, p.role) for p in ROLE_POLICIES} <= set(spec.roles)
    notes = {m.condition: m.params.get("update_note") for m in spec.methods}
    for name, note in notes.items():
        if name.endswith("-self"):
            assert note is None and notes[name.removesuffix("-self") + "-lesson"] == "clr:lesson"
    assert {"frozen", "history", "history-lesson"} <= set(notes)
    assert {spec.models[m].model for m in spec.with_model("scripted").roles.values()} == {"clr-student"}
    embedded = spec.with_model("embedded")
    assert {embedded.models[m].backend for m in embedded.roles.values()} == {"embedded"}


def test_tf_grpo_learns_from_a_mixed_group_of_sampled_listers(tmp_path: Path) -> None:
    """At TF-GRPO's temperature 0.7 each rollout draws with its own seed, so the lister's guesses differ and the first
    chain's layer-1 group is mixed (one rollout guessed the hidden member): the semantic advantage runs for real."""
    from evoarena.harness import load_tree
    from evoarena.protocol.run.runner import run_experiment
    from evoarena.spec import parse_spec
    from evoarena.store import RunStore

    spec = parse_spec({
        "name": "clr-tf-grpo",
        "benchmark": {"name": "clr", "params": {"chains": 1, "layers": 1}},
        "methods": [{"name": "tf_grpo", "label": "tf_grpo-self", "params": {"group_size": 4}}],
        "models": {"s": {"backend": "scripted", "model": "clr-student", "max_retries": 0}},
        "roles": {r: "s" for r in ("solver", "summarizer", "critic", "updater")},
    })
    run_experiment(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    assert not store.query("SELECT id FROM events WHERE kind='rejected_output'")
    seeds = {json.loads(r["params"])["seed"] for r in store.query("SELECT params FROM calls WHERE role='solver'")}
    assert len(seeds) == 4  # one per sample index
    updates = [json.loads(r["payload"]) for r in store.query("SELECT payload FROM events WHERE kind='tf_grpo_update'")]
    assert updates and all(0 < u["mean_reward"] < 1 for u in updates)
    (cell,) = store.query("SELECT current_version FROM cells")
    library = load_tree(store, cell["current_version"])["memory/experiences.json"]
    assert any(op["experience"] in library for op in updates[0]["ops"])


def test_skillprox_diagnoser_patcher_and_shrinker_list_then_remove_members() -> None:
    from evoarena.methods.skillprox.method import INITIAL_SKILL, SkillProx
    from evoarena.methods.skillprox.patch import Patch, locality_problems, parse_patch
    from evoarena.methods.skillprox.skill import struct_problems, units, with_skill

    c = case()
    diagnosis = json.loads(ask(skillprox_templates(c)[("skillprox", "diagnoser")]))
    assert_lists_members(diagnosis["skill_change"], c.members)
    diagnoses = [{"task": "t/L2/practice", "passed": False, "score": "0.500", **diagnosis}]
    momentum = json.loads(ask(skillprox_templates(c, diagnoses=diagnoses)[("skillprox", "momentum")]))
    assert momentum["patterns"] and all(member_line(m) in momentum["overlay"] for m in c.members)
    prompts = skillprox_templates(c, diagnoses=diagnoses)
    patch = parse_patch(ask(prompts[("skillprox", "patcher")]), dict(INITIAL_SKILL))
    assert isinstance(patch, Patch) and not struct_problems(patch.skill)
    assert_lists_members(patch.skill["SKILL.md"], c.members)
    context = SkillProx().context(with_skill({}, patch.skill), case_view())
    assert_solver_excludes(context, c.members)
    again = parse_patch(ask(skillprox_templates(c, patch.skill, diagnoses)[("skillprox", "patcher")]), patch.skill)
    assert again == "the patch changes nothing"  # members already listed are not listed twice; a no-op is refused
    target = units(patch.skill)[-1]
    shrink = parse_patch(ask(skillprox_templates(c, patch.skill)[("skillprox", "shrinker")]), patch.skill,
                         extra=("action", "receiver"))
    assert isinstance(shrink, Patch) and shrink.extra["action"] == "delete"
    assert not struct_problems(shrink.skill) and not locality_problems(patch.skill, shrink.skill, target.uid)
    assert not any(member_line(m) in shrink.skill["SKILL.md"] for m in c.members)
