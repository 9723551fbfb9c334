"""The update roles of the scripted exception-lister `clr-student` (evidence: mechanism).

`--model scripted` maps every role of every method to one policy, so `clr-student` must answer each method's
update prompts as well as the solver's. Whatever the role, it behaves like the agents of the paper's central
finding (clr-notes §1): it copies the members the feedback revealed ("X belongs to <label>.") into the method's
state, in exactly the format that method adopts — never the class. Its solver then excludes those values.

An update prompt is recognised by a distinctive phrase of its template (`ROLE_POLICIES`, one table; phrases are
compared with whitespace collapsed, so a reflowed template still matches). The lesson or any other update note in
front of a prompt is ignored: the exception-lister lists exceptions in both conditions, so `self` and `lesson`
coincide under the scripted model — a mechanism result, not a finding. Where a prompt shows no feedback (DC's
curator and ReasoningBank see only the solver's output and, on CLR, its execution output), only the members that
output states are recorded; with none, the state comes back unchanged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evoarena.methods.skillprox.patch import changed_files
from evoarena.methods.skillprox.skill import ablate, read_rendered
from evoarena.scripted.clr.membership import Member, member_line, new_members, revealed_members

MEMBERS_HEADER = "Values confirmed to belong to a label (records with these values are not counted):"
SKILL_NAME = "confirmed-members"
PASSED = "All practice inputs passed."
STRATEGY = "Exclude each rule's example and every value the feedback confirmed as a member; count all other values."


def _flat(text: str) -> str:
    return " ".join(text.split())


def _span(text: str, start: str, *ends: str) -> tuple[int, int] | None:
    i = text.find(start)
    if i < 0:
        return None
    i += len(start)
    stops = [j for j in (text.find(e, i) for e in ends) if j >= 0]
    return i, min(stops, default=len(text))


def section(text: str, start: str, *ends: str) -> str:
    """The text after the first `start` up to the earliest of `ends` after it ("" when `start` is absent)."""
    span = _span(text, start, *ends)
    return "" if span is None else text[span[0] : span[1]]


def with_members(text: str, members: Sequence[Member]) -> str:
    """`text` with one "- X belongs to L." line per member appended under `MEMBERS_HEADER` (added once)."""
    text = text.strip()
    if not members:
        return text
    if MEMBERS_HEADER not in text:
        text = f"{text}\n\n{MEMBERS_HEADER}" if text else MEMBERS_HEADER
    return text + "".join(f"\n- {member_line(m)}" for m in members)


def _sentences(members: Sequence[Member]) -> str:
    return " ".join(member_line(m) for m in members)


# -- Reflexion ----------------------------------------------------------------------------------------------------


def reflexion_reflection(text: str) -> str:
    """One line: the revealed members (the reflector stops at a blank line and refuses over 600 characters)."""
    return _sentences(revealed_members(text)) or "Nothing new was revealed."


# -- ACE ----------------------------------------------------------------------------------------------------------


def ace_reflection(text: str) -> str:
    """The reflector's JSON; `key_insight` holds the revealed members, cited bullets are tagged."""
    members = revealed_members(text)
    passed = PASSED in text
    cited = re.findall(r"^\[([a-z]+-\d{5})\]", section(text, "Playbook bullets the generator cited:"), re.M)
    return json.dumps({
        "reasoning": f"The program excludes each rule's example and the listed values; the feedback names "
                     f"{len(members)} further member(s).",
        "error_identification": "none" if passed else "Records with a confirmed member were counted.",
        "root_cause_analysis": "none" if passed else "Those values were not on the program's exclusion list.",
        "correct_approach": "Add every value the feedback confirms as a member to its rule's exclusion list.",
        "key_insight": _sentences(members) or "No new member was revealed.",
        "bullet_tags": [{"id": i, "tag": "helpful" if passed else "neutral"} for i in cited],
    }, ensure_ascii=False)


def ace_curation(text: str) -> str:
    """One ADD per member in the reflection that the playbook does not list yet."""
    reflection = section(text, "Recent reflection:", "\nCurrent playbook:")
    playbook = section(text, "Current playbook:", "\nQuestion context:")
    ops = [{"type": "ADD", "section": "common mistakes", "content": member_line(m)}
           for m in new_members(reflection, playbook)]
    return json.dumps({"reasoning": f"{len(ops)} new confirmed member(s).", "operations": ops}, ensure_ascii=False)


# -- Dynamic Cheatsheet ---------------------------------------------------------------------------------------------

_DC_END = ("\n\n## Similar earlier problems", "\n\nWrite the complete new cheatsheet")


def dc_cheatsheet(text: str) -> str:
    """The full new sheet: the previous one kept as it was, plus the members stated elsewhere in the prompt (the
    solver output's execution output, or the retrieved earlier outputs); nothing new gives the old sheet back."""
    span = _span(text, "## Previous cheatsheet\n", *_DC_END)
    old, rest = ("", text) if span is None else (text[span[0] : span[1]], text[: span[0]] + text[span[1] :])
    sheet = with_members("" if old.strip() == "(empty)" else old, new_members(rest, old)) or "(empty)"
    return f"<cheatsheet>\n{sheet}\n</cheatsheet>"


# -- GEPA -----------------------------------------------------------------------------------------------------------


def gepa_instruction(text: str) -> str:
    """The old instruction kept, with the examples' newly revealed members appended, in a ``` block."""
    instruction = section(text, "to perform a task for me:\n```\n", "\n```\n\nThe following are examples")
    examples = section(text, "The following are examples", "\nYour task is to write a new instruction")
    return f"```\n{with_members(instruction, new_members(examples, instruction))}\n```"


# -- Training-Free GRPO ---------------------------------------------------------------------------------------------


def tf_grpo_summary(text: str) -> str:
    """A brief summary that carries the rollout's reward and the members its feedback revealed."""
    used = re.findall(r"^\[(G\d+)\]", section(text, "Experiences:\n", "\n\nAgent output:"), re.M)
    reward = re.search(r"^Reward: (\S+)", text, re.M)
    members = revealed_members(section(text, "(grader: ", ")\n\nSummary:"))
    return (
        "The agent wrote one program excluding each rule's example and the values listed as members. "
        f"It used experiences {', '.join(used) or 'none'}. Reward {reward.group(1) if reward else '?'}. "
        + (_sentences(members) or "No member was revealed.")
    )


def tf_grpo_critique(text: str) -> str:
    """Exactly one operation: add the summaries' new members (within the word limit); with none, rewrite G0 as it
    is (a no-op) or, on an empty library, add the exception-lister's strategy."""
    limit = re.search(r"at most (\d+) words", text)
    max_words = int(limit.group(1)) if limit else 32
    experiences = section(text, "Current experiences:\n", "\n\nAttempt summaries:")
    kept: list[str] = []
    for m in new_members(section(text, "Attempt summaries:\n", "\n\nReply with a JSON list"), experiences):
        if len(" ".join([*kept, member_line(m)]).split()) <= max_words:
            kept.append(member_line(m))
    first = re.search(r"^\[G0\]\. (.+)$", experiences, re.M)
    if kept:
        op = {"option": "add", "experience": " ".join(kept)}
    elif first:
        op = {"option": "modify", "experience": first.group(1).strip(), "modified_from": "G0"}
    else:
        op = {"option": "add", "experience": STRATEGY}
    return json.dumps([op], ensure_ascii=False)


def tf_grpo_update(text: str) -> str:
    """Apply the proposed operation as it stands."""
    proposed = section(text, "Proposed operation:\n", "\n\nDecide how to apply it").strip()
    try:
        op = json.loads(proposed)
    except json.JSONDecodeError:
        return "[]"
    return json.dumps([op] if isinstance(op, dict) else [], ensure_ascii=False)


# -- ReasoningBank --------------------------------------------------------------------------------------------------


def rb_judge(text: str) -> str:
    """Strict, as the prompt asks: success only when the prompt shows that every practice input passed."""
    if PASSED in text:
        return "Thoughts: The feedback says every practice input passed.\nStatus: success"
    return "Thoughts: Nothing in the prompt shows that the program is right; uncertain means failure.\nStatus: failure"


def _item(n: int, title: str, description: str, content: str) -> str:
    return f"# Memory Item {n}\n## Title {title}\n## Description {description}\n## Content {content}\n"


def rb_memory_items(text: str) -> str:
    """The strategy item, and one item with the revealed members when the prompt shows any (≤ 3 items)."""
    out = _item(1, "Exclude the example and the confirmed members",
                "Keep one exclusion list per rule label.", STRATEGY)
    members = revealed_members(text)
    if members:
        out += _item(2, "Confirmed members", "Values confirmed to belong to a rule's label.", _sentences(members))
    return out


# -- EvoSkill -------------------------------------------------------------------------------------------------------


def evoskill_proposal(text: str) -> str:
    """Create (or edit, once it exists) the `confirmed-members` skill with the failures' new members."""
    skills = section(text, "# Existing skills\n", "\n# Feedback history")
    existing = re.findall(r"^## ([a-z0-9-]+)\s*$", skills, re.M)
    members = new_members(section(text, "# Failures of the current agent\n", "\nPropose ONE skill change"), skills)
    return json.dumps({
        "action": "edit" if SKILL_NAME in existing else "create",
        "target_skill": SKILL_NAME,
        "proposed_skill": "Exclude records whose value the feedback confirmed as a member of a rule's label. "
                          + (_sentences(members) or "Keep the members already listed."),
        "justification": f"The failures counted {len(members)} confirmed member(s) missing from the exclusion list.",
    }, ensure_ascii=False)


def evoskill_skill(text: str) -> str:
    """A SKILL.md with front matter and one line per member (the current version's and the proposed ones)."""
    name = re.search(r"^Skill name: (\S+)", text, re.M)
    members = revealed_members(text)
    body = with_members("", members) if members else STRATEGY
    return (
        f"---\nname: {name.group(1) if name else SKILL_NAME}\n"
        "description: Use on record-counting tasks whose rules exclude values by an opaque label.\n"
        f"---\n{body}\n"
    )


# -- SkillProx ------------------------------------------------------------------------------------------------------

MEMBERS_SECTION = "## Confirmed members"


def _skill_files(text: str, end: str) -> dict[str, str]:
    """The skill files a SkillProx prompt renders between '# Current skill' and `end`."""

    return read_rendered(section(text, "# Current skill\n", end))


def skillprox_diagnosis(text: str) -> str:
    """The diagnoser's JSON: the members the diagnosed trajectory's feedback revealed become the skill change."""
    members = revealed_members(section(text, "# The trajectory to diagnose", "# The other trajectories"))
    change = _sentences(members) or "Keep the confirmed members listed."
    return json.dumps({"diagnosis": f"The program counted {len(members)} confirmed member(s) it should exclude.",
                       "skill_change": change}, ensure_ascii=False)


def skillprox_momentum(text: str) -> str:
    """The momentum agent's JSON: one persistent pattern, and an overlay naming the members to add."""
    members = revealed_members(section(text, "# This iteration's per-task diagnoses", "Update the record"))
    return json.dumps({"patterns": ["The program counts records whose value the feedback confirmed as a member."],
                       "overlay": _sentences(members) or "Keep the confirmed members."}, ensure_ascii=False)


def skillprox_patch(text: str) -> str:
    """The patcher's JSON: SKILL.md with one line per diagnosed member not yet listed, under one section."""
    main = _skill_files(text, "# Per-task diagnoses").get("SKILL.md", "").rstrip()
    members = new_members(section(text, "# Per-task diagnoses", "# Momentum"), main)
    if members:
        if MEMBERS_SECTION not in main:
            main += f"\n\n{MEMBERS_SECTION}"
        main += "".join(f"\n- {member_line(m)}" for m in members)
    return json.dumps({"files": {"SKILL.md": main + "\n"},
                       "summary": f"listed {len(members)} confirmed member(s)"}, ensure_ascii=False)


def skillprox_shrink(text: str) -> str:
    """The shrinker's JSON: delete the target outright (an L2 section: its lines; an L3 file: the file and pointer)."""

    skill = _skill_files(text, "# Target unit")
    target = re.search(r"^# Target unit (.+?) \(an L[23] ", text, re.M)
    after = ablate(skill, target.group(1)) if target else skill
    return json.dumps({"action": "delete", "receiver": "", "files": changed_files(skill, after),
                       "summary": f"delete {target.group(1) if target else '?'}"}, ensure_ascii=False)


# -- the table ------------------------------------------------------------------------------------------------------


CALLED_AS = {"momentum": "diagnoser"}
"""Update steps that call another role's model: SkillProx's momentum agent runs as its `diagnoser`."""


@dataclass(frozen=True)
class RolePolicy:
    method: str
    role: str
    phrase: str
    """A phrase only this role's prompt template contains."""
    reply: Callable[[str], str]


ROLE_POLICIES: tuple[RolePolicy, ...] = (
    RolePolicy("reflexion", "reflector",
               "You are an advanced reasoning agent that can improve based on self-reflection", reflexion_reflection),
    RolePolicy("ace", "reflector", "You are the ACE Reflector", ace_reflection),
    RolePolicy("ace", "curator", "You are the ACE Curator", ace_curation),
    RolePolicy("dynamic_cheatsheet", "curator", "# Cheatsheet curator", dc_cheatsheet),
    RolePolicy("gepa", "proposer", "I provided an assistant with the following instructions", gepa_instruction),
    RolePolicy("tf_grpo", "summarizer", "Summarize its attempt step by step", tf_grpo_summary),
    RolePolicy("tf_grpo", "critic", "Turn that into ONE general, strategic experience", tf_grpo_critique),
    RolePolicy("tf_grpo", "updater", "You maintain a library of experiences", tf_grpo_update),
    RolePolicy("reasoning_bank", "judge", "# Trajectory judge", rb_judge),
    RolePolicy("reasoning_bank", "inducer", "# Memory induction (", rb_memory_items),
    RolePolicy("evoskill", "proposer", "You improve an agent by giving it reusable skills", evoskill_proposal),
    RolePolicy("evoskill", "skill_writer", "Write a skill file (SKILL.md) for an agent.", evoskill_skill),
    RolePolicy("skillprox", "diagnoser", "You are the SkillProx diagnoser", skillprox_diagnosis),
    RolePolicy("skillprox", "momentum", "You are the SkillProx momentum agent", skillprox_momentum),
    RolePolicy("skillprox", "patcher", "You are the SkillProx patcher", skillprox_patch),
    RolePolicy("skillprox", "shrinker", "You are the SkillProx shrinker", skillprox_shrink),
)


def recognise(text: str) -> RolePolicy | None:
    """The update role whose template phrase `text` contains, or None (a solver prompt)."""
    flat = _flat(text)
    return next((p for p in ROLE_POLICIES if _flat(p.phrase) in flat), None)


def answer_role(text: str) -> str | None:
    """The exception-lister's reply to an update prompt, or None when `text` is no update prompt."""
    policy = recognise(text)
    return None if policy is None else policy.reply(text)
