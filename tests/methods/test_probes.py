"""Each method's role probes: the replies a role could give, judged by the method's own parser — a usable one, a
malformed one (the parser refuses it) and a well-formed but unusable one (no sign of use) — and the shares."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from evoarena.api import GENERIC_EXAMPLES, Method, Probe, Reply, Verdict
from evoarena.methods.ace.method import Ace
from evoarena.methods.dynamic_cheatsheet.method import DynamicCheatsheet
from evoarena.methods.evoskill.method import EvoSkill
from evoarena.methods.evotest import EvoTest
from evoarena.methods.gepa.method import PROBE_INSTRUCTION, Gepa
from evoarena.methods.reasoning_bank.method import ReasoningBank
from evoarena.methods.reflexion.method import Reflexion
from evoarena.methods.skillprox.method import SkillProx
from evoarena.methods.tf_grpo.method import TfGrpo

Replier = Callable[[Probe], str]


def shares(method: Method, role: str, reply: Replier) -> tuple[int, int, int]:
    """(n, well-formed, usable) of `method`'s probes for `role` when every reply is `reply(probe)`."""
    probes = [p for p in method.probes(GENERIC_EXAMPLES) if p.role == role]
    verdicts: list[Verdict] = [p.judge(Reply(reply(p), "stop")) for p in probes]
    return len(probes), sum(v.well_formed for v in verdicts), sum(v.usable for v in verdicts)


def feedback_of(p: Probe) -> str:
    return next(ex.feedback for ex in GENERIC_EXAMPLES if ex.id in p.name)


def test_the_base_method_has_no_probes() -> None:
    from evoarena.methods.frozen import Frozen

    assert Frozen().probes(GENERIC_EXAMPLES) == ()


def test_reflexion_probes() -> None:
    m = Reflexion()
    probes = m.probes(GENERIC_EXAMPLES)
    assert [p.name for p in probes] == ["reflect/probe-sum", "reflect/probe-count"]
    assert all(p.role == "reflector" and p.stop == ("\n\n",) for p in probes)
    assert "Feedback: Incorrect: the expected answer is 10." in probes[0].prompt  # the method's own template
    assert shares(m, "reflector", lambda p: f"I ignored this: {feedback_of(p)}") == (2, 2, 2)
    assert shares(m, "reflector", lambda p: "") == (2, 0, 0)  # clean_reflection refuses an empty reflection
    assert shares(m, "reflector", lambda p: "x" * 700) == (2, 0, 0)  # … and one over max_chars
    assert shares(m, "reflector", lambda p: "Think harder next time.") == (2, 2, 0)  # says nothing of the feedback
    assert shares(m, "reflector", lambda p: "Read the word list and the apples again.") == (2, 2, 0)  # the task's words
    assert shares(m, "reflector", lambda p: "Please provide the question and the feedback.") == (2, 2, 0)
    cut = probes[0].check(Reply(feedback_of(probes[0]), "length"))
    assert not cut.well_formed and "cut off" in cut.reason


def ace_reflection(p: Probe) -> str:
    return json.dumps({"error_identification": feedback_of(p), "key_insight": "Read again.", "bullet_tags": []})


def test_ace_probes() -> None:
    m = Ace()
    assert {p.role for p in m.probes(GENERIC_EXAMPLES)} == {"reflector", "curator"}
    assert shares(m, "reflector", ace_reflection) == (2, 2, 2)
    assert shares(m, "reflector", lambda p: "The answer was wrong.") == (2, 0, 0)  # no JSON object
    assert shares(m, "reflector", lambda p: '{"key_insight": "Be careful."}') == (2, 2, 0)
    add = json.dumps({"operations": [{"type": "ADD", "section": "common mistakes", "content": "Subtract gifts."}]})
    assert shares(m, "curator", lambda p: add) == (2, 2, 2)
    assert shares(m, "curator", lambda p: '{"reasoning": "none"}') == (2, 0, 0)  # no operations list
    assert shares(m, "curator", lambda p: '{"operations": [{"type": "DELETE", "id": "str-00001"}]}') == (2, 2, 0)


def test_dynamic_cheatsheet_probes_of_both_variants() -> None:
    cumulative = DynamicCheatsheet()
    assert len(cumulative.probes(GENERIC_EXAMPLES)) == 4  # an empty and a one-entry sheet per example
    new = "<cheatsheet>\n## Strategies\n- Subtract what is given away.\n</cheatsheet>"
    assert shares(cumulative, "curator", lambda p: new) == (4, 4, 4)
    assert shares(cumulative, "curator", lambda p: "Here is my sheet: be careful.") == (4, 0, 0)
    assert shares(cumulative, "curator", lambda p: "<cheatsheet>(empty)</cheatsheet>") == (4, 4, 2)  # unchanged
    rs = DynamicCheatsheet(variant="retrieval_synthesis")
    assert [p.name for p in rs.probes(GENERIC_EXAMPLES)] == ["curate-rs/probe-sum", "curate-rs/probe-count"]
    assert "### Earlier problem 1" in rs.probes(GENERIC_EXAMPLES)[0].prompt
    assert shares(rs, "curator", lambda p: new) == (2, 2, 2)


def test_gepa_probes() -> None:
    m = Gepa()
    assert [p.name for p in m.probes(GENERIC_EXAMPLES)] == ["propose/probe-sum", "propose/probe-count", "propose/all"]
    assert shares(m, "proposer", lambda p: "```\nSubtract what is given away; check every item.\n```") == (3, 3, 3)
    # the measured non-answer of the gepa package's run on Qwen2.5-Coder-1.5B (issue 11 §5): no fence
    # as released the reply is the instruction (adoptable), but a request is not a usable one; strict refuses it
    assert shares(m, "proposer", lambda p: "Certainly! Please provide the new instruction.") == (3, 3, 0)
    assert shares(Gepa(fences="strict"), "proposer", lambda p: "Certainly! Please provide it.") == (3, 0, 0)
    assert shares(m, "proposer", lambda p: "Subtract what is given away.") == (3, 3, 3)
    assert shares(m, "proposer", lambda p: "```\nPlease provide the new instruction.\n```") == (3, 3, 0)
    assert shares(m, "proposer", lambda p: f"```\n{PROBE_INSTRUCTION}\n```") == (3, 3, 0)  # repeats its parent


def test_skillprox_probes() -> None:
    m = SkillProx()
    assert {p.role for p in m.probes(GENERIC_EXAMPLES)} == {"diagnoser", "patcher"}
    def good(p: Probe) -> str:
        return json.dumps({"diagnosis": f"The grader said: {feedback_of(p)}", "skill_change": "Check the steps."})

    assert shares(m, "diagnoser", good) == (2, 2, 2)
    assert shares(m, "diagnoser", lambda p: '{"diagnosis": "x"}') == (2, 0, 0)  # no skill_change
    vague = json.dumps({"diagnosis": "It went wrong.", "skill_change": "Do better."})
    assert shares(m, "diagnoser", lambda p: vague) == (2, 2, 0)
    skill = m.initial_skill["SKILL.md"]
    patch = json.dumps({"files": {"SKILL.md": skill + "\n## Checks\nRe-read the task.\n"}, "summary": "add checks"})
    assert shares(m, "patcher", lambda p: patch) == (2, 2, 2)
    same = json.dumps({"files": {"SKILL.md": skill}, "summary": "no change"})
    assert shares(m, "patcher", lambda p: same) == (2, 0, 0)  # parse_patch: the patch changes nothing
    assert shares(m, "patcher", lambda p: "I would add a checks section.") == (2, 0, 0)


def lesson_of(p: Probe) -> str:
    return next(ex.lesson for ex in GENERIC_EXAMPLES if ex.id in p.name)


def add_lesson(p: Probe) -> str:
    return json.dumps([{"option": "add", "experience": lesson_of(p)}])


def test_tf_grpo_probes() -> None:
    m = TfGrpo()
    assert [p.name for p in m.probes(GENERIC_EXAMPLES)][:3] == [
        "summarize/probe-sum", "critique/probe-sum", "update/probe-sum"]
    assert shares(m, "summarizer", lambda p: f"It added: {feedback_of(p)}") == (2, 2, 2)
    assert shares(m, "summarizer", lambda p: "  ") == (2, 0, 0)
    assert shares(m, "summarizer", lambda p: "The agent answered.") == (2, 2, 0)
    assert shares(m, "critic", add_lesson) == (2, 2, 2)
    two = json.dumps([{"option": "add", "experience": "a"}, {"option": "add", "experience": "b"}])
    assert shares(m, "critic", lambda p: two) == (2, 0, 0)  # the critic must give exactly one operation
    unknown = '[{"option": "modify", "experience": "x", "modified_from": "G7"}]'
    assert shares(m, "critic", lambda p: unknown) == (2, 0, 0)
    assert shares(m, "critic", lambda p: '[{"option": "add", "experience": "Think harder."}]') == (2, 2, 0)
    assert shares(m, "updater", add_lesson) == (2, 2, 2)
    same = '[{"option": "modify", "experience": "Re-read the question before answering.", "modified_from": "G0"}]'
    assert shares(m, "updater", lambda p: same) == (2, 2, 0)  # the library is unchanged
    delete = '[{"option": "delete", "delete_id": "G0"}]'
    assert shares(m, "updater", lambda p: delete) == (2, 0, 0)  # not an op of the original variant
    assert shares(TfGrpo(variant="main"), "updater", lambda p: delete) == (2, 2, 2)
    critique = m.probes(GENERIC_EXAMPLES)[1]
    cut = critique.check(Reply(add_lesson(critique), "length"))
    assert not cut.well_formed and "cut off" in cut.reason


def test_evoskill_probes() -> None:
    m = EvoSkill()
    probes = m.probes(GENERIC_EXAMPLES)
    assert [p.name for p in probes] == ["propose/probe-sum", "write/probe-sum", "propose/probe-count",
                                        "write/probe-count"]
    assert "Incorrect: the expected answer is 10." in probes[0].prompt and "(none yet)" in probes[0].prompt
    def proposal(p: Probe, teach: str) -> str:
        return json.dumps({"action": "create", "target_skill": "careful-counting", "proposed_skill": teach,
                           "justification": "see the failure"})

    assert shares(m, "proposer", lambda p: proposal(p, feedback_of(p))) == (2, 2, 2)
    assert shares(m, "proposer", lambda p: proposal(p, "Be careful.")) == (2, 2, 0)
    assert shares(m, "proposer", lambda p: proposal(p, "Please provide the failures.")) == (2, 2, 0)
    edit = json.dumps({"action": "edit", "target_skill": "x", "proposed_skill": "y", "justification": "z"})
    assert shares(m, "proposer", lambda p: edit) == (2, 0, 0)  # no skill to edit yet
    def skill(p: Probe, body: str) -> str:
        name = p.name.split("/", 1)[1] + "-skill"
        return f"---\nname: {name}\ndescription: when counting\n---\n{body}\n"

    assert shares(m, "skill_writer", lambda p: skill(p, lesson_of(p))) == (2, 2, 2)
    assert shares(m, "skill_writer", lambda p: skill(p, "Work carefully.")) == (2, 2, 0)
    assert shares(m, "skill_writer", lambda p: lesson_of(p)) == (2, 0, 0)  # no front matter
    wrong = "---\nname: other\ndescription: d\n---\nbody\n"
    assert shares(m, "skill_writer", lambda p: wrong) == (2, 0, 0)


@pytest.mark.parametrize("cls", [Reflexion, Ace, DynamicCheatsheet, Gepa, SkillProx, ReasoningBank, TfGrpo,
                                 EvoSkill, EvoTest])
def test_every_probe_asks_a_role_the_method_has(cls: type[Method]) -> None:
    probes = cls().probes(GENERIC_EXAMPLES)
    assert 2 <= len(probes) <= 8
    assert {p.role for p in probes} <= set(cls.roles) - {"solver"}
    assert len({p.name for p in probes}) == len(probes)


def test_reasoning_bank_probes() -> None:
    m = ReasoningBank()
    assert [p.name for p in m.probes(GENERIC_EXAMPLES)] == ["judge/probe-sum", "induce/probe-sum",
                                                            "judge/probe-count", "induce/probe-count"]
    assert shares(m, "judge", lambda p: "Thoughts: the sum is wrong.\nStatus: failure") == (2, 2, 2)
    assert shares(m, "judge", lambda p: "Thoughts: fine.\nStatus: success") == (2, 2, 0)  # the trajectory failed
    assert shares(m, "judge", lambda p: "It looks fine to me.") == (2, 0, 0)
    item = "# Memory Item 1\n## Title Check signs\n## Description Word problems.\n## Content Subtract gifts.\n"
    assert shares(m, "inducer", lambda p: item) == (2, 2, 2)  # generic examples show no execution output
    assert shares(m, "inducer", lambda p: "# Memory Item 1\n## Title Check\n") == (2, 0, 0)  # lacks fields


def test_evotest_probes_of_both_scopes() -> None:
    released, paper = EvoTest(), EvoTest(mutate="paper")
    probes = released.probes(GENERIC_EXAMPLES)
    assert [p.name for p in probes] == ["evolve/probe-sum", "evolve/probe-count"]
    assert "GAME HISTORY START" in probes[0].prompt and "Incorrect: the expected answer is 10." in probes[0].prompt
    assert "<memory>" not in probes[0].prompt and "<memory>" in paper.probes(GENERIC_EXAMPLES)[0].prompt
    code = "<code>\ndef extract_state(game_history):\n    return 'x'\n</code>"
    good = "Add the numbers again and check the total before answering.\n" + code
    assert shares(released, "evolver", lambda p: good) == (2, 2, 2)
    assert shares(released, "evolver", lambda p: "[Your generated prompt here]") == (2, 0, 0)  # the placeholder
    assert shares(released, "evolver", lambda p: "short") == (2, 0, 0)
    same = released.params.initial_guide + "\n" + code  # keeps only an extractor: well formed, no new prompt
    assert shares(released, "evolver", lambda p: same) == (2, 2, 0)
    assert shares(paper, "evolver", lambda p: "<memory>Check sums.</memory><temperature>0.3</temperature>") == (2, 2, 0)
    assert not probes[0].check(Reply(good, "length")).well_formed
