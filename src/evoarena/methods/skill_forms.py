"""The built-in methods whose state is a skill or playbook, read as an Agent Skills folder (`evoarena export --as
skill`): `SKILL.md`'s body (front matter is the exporter's) and any supporting files, one function per method.

A method of one's own gives its form by overriding `Method.skill_tree`; these are the built-in ones, kept apart from
the method modules so that reading a state never changes how a method runs."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from evoarena.methods.ace import PLAYBOOK
from evoarena.methods.ace_playbook import parse_playbook
from evoarena.methods.dynamic_cheatsheet import SHEET
from evoarena.methods.evoskill import skills_of
from evoarena.methods.skillprox.skill import MAIN, active_references, skill_of
from evoarena.methods.tf_grpo import read_library, render_library

SkillForm = Callable[[Mapping[str, str]], dict[str, str]]
_FRONT = re.compile(r"^---\n(.*?)\n---\n?", flags=re.S)


def strip_front_matter(text: str) -> tuple[dict[str, str], str]:
    """(the `key: value` lines of a leading `---` block, the text after it); ({}, text) when there is none."""
    m = _FRONT.match(text.lstrip("\ufeff"))
    if not m:
        return {}, text
    fields = {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in m.group(1).splitlines()) if k.strip()}
    return fields, text[m.end():]


def _ace(tree: Mapping[str, str]) -> dict[str, str]:
    pb = parse_playbook(tree.get(PLAYBOOK, ""))
    if not pb.bullets():
        return {"SKILL.md": ""}
    sections = [f"## {name.capitalize()}\n\n" + "\n".join(f"- {b.content} (helpful {b.helpful}, harmful {b.harmful})"
                                                        for b in bullets)
                for name, bullets in pb.sections.items() if bullets]  # the curator's counts stay, as evidence
    return {"SKILL.md": "# Playbook\n\nStrategies and insights learned so far: apply the relevant ones, avoid the "
                        "listed mistakes.\n\n" + "\n\n".join(sections) + "\n"}


def _cheatsheet(tree: Mapping[str, str]) -> dict[str, str]:
    sheet = tree.get(SHEET, "").strip()
    if not sheet:
        return {"SKILL.md": ""}
    return {"SKILL.md": "# Cheatsheet\n\nStrategies and worked solutions from earlier problems; use what is "
                        "relevant.\n\n" + sheet + "\n"}


def _experiences(tree: Mapping[str, str]) -> dict[str, str]:
    library = render_library(read_library(tree))
    if not library:
        return {"SKILL.md": ""}
    return {"SKILL.md": "# Experiences\n\nLessons distilled from groups of attempts; apply the relevant ones.\n\n"
                        + library + "\n"}


def _skillprox(tree: Mapping[str, str]) -> dict[str, str]:
    """SkillProx's state is an Agent Skill already: its SKILL.md and the references it points to."""
    skill = skill_of(tree)
    _, body = strip_front_matter(skill.get(MAIN, ""))
    return {"SKILL.md": body.strip() + "\n" if body.strip() else "",
            **{p: skill[p] for p in active_references(skill)}}


def _evoskill(tree: Mapping[str, str]) -> dict[str, str]:
    """The live skills, one `## <name>` section each (the solver is shown all of them), with their descriptions."""
    parts = []
    for name, text in skills_of(tree).items():
        fields, body = strip_front_matter(text)
        about = fields.get("description", "")
        parts.append(f"## {name}\n\n" + (f"{about}\n\n" if about else "") + body.strip() + "\n")
    if not parts:
        return {"SKILL.md": ""}
    return {"SKILL.md": "# Skills\n\nApply any that fit the task.\n\n" + "\n".join(parts)}


BUILTIN: dict[str, tuple[str, SkillForm]] = {  # method name: (what its state is called, its form)
    "ace": ("playbook", _ace), "dynamic_cheatsheet": ("cheatsheet", _cheatsheet),
    "tf_grpo": ("experience library", _experiences), "skillprox": ("skill", _skillprox),
    "evoskill": ("skill set", _evoskill),
}


def builtin_skill_tree(method: str, tree: Mapping[str, str]) -> dict[str, str] | None:
    """A built-in method's state as an Agent Skills folder; None when its state is no skill or playbook."""
    entry = BUILTIN.get(method)
    return None if entry is None else entry[1](tree)


def skill_kind(method: str) -> str:
    """What a method's skill-like state is called in an export's description ("skill" for a method of one's own)."""
    entry = BUILTIN.get(method)
    return "skill" if entry is None else entry[0]
