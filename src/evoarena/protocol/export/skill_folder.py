"""A harness version as an Agent Skills folder: `SKILL.md` (YAML front matter `name`, from the task set and the
condition, and a description that says what was evolved, by which method, on which tasks and how it scored) plus
supporting files. Repeated bullets are exported once (bullets.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from evoarena.api import Method
from evoarena.protocol.export.bullets import deduplicate

PROVENANCE = "evoarena-export.json"


class SkillExportError(ValueError):
    """The version cannot be shown as a skill: the method keeps none, or it is still empty."""


@dataclass(frozen=True)
class SkillFolder:
    """The folder's files, and what was left out of SKILL.md: repeated and empty bullets."""

    files: dict[str, str]
    repeated: int = 0
    empty: int = 0

    def notes(self) -> tuple[str, ...]:
        """What a reader of the export is told was left out, e.g. `3 repeated bullets dropped`."""
        said = [(self.repeated, "repeated"), (self.empty, "empty")]
        return tuple(f"{n} {what} bullet{'s' if n != 1 else ''} dropped" for n, what in said if n)


def skill_name(task_set: str, condition: str) -> str:
    """`<task set>-<condition>` by Agent Skills' name rule: lowercase letters, digits and single hyphens, at most 64
    characters."""
    slug = re.sub(r"[^a-z0-9]+", "-", f"{task_set}-{condition}".lower()).strip("-")
    return slug[:64].rstrip("-") or "evoarena-skill"


def _first_line(text: str, limit: int = 240) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _score(split: Mapping[str, Any]) -> str:
    n = int(split.get("n") or 0)
    return "not graded" if split.get("mean") is None else f"{split['mean']:.2f} on {n} task{'s' if n != 1 else ''}"


def description(about: Mapping[str, Any], kind: str, instructions: str) -> str:
    """What the skill is, for which tasks, and the evidence behind it; within the 1024 characters Agent Skills
    allows."""
    on = (f"the tasks of {about['tasks_file']} (the {about['benchmark']} benchmark)" if about.get("tasks_file")
          else f"the {about['benchmark']} benchmark")
    what = f"{kind[0].upper()}{kind[1:]} evolved by {about['method']} on {on}"
    task = f" for tasks where the instruction is: {instructions.rstrip('.')}" if instructions else ""
    where = (f" Use it on tasks of that kind. From evoarena run {about['run']} (cell {about['cell']}, version "
             f"{str(about['version'])[:12]}, the {about['version_is']} one; val {_score(about['val'])}, test "
             f"{_score(about['test'])}; evidence: {about['evidence']}).")
    text = f"{what}{task}.{where}"
    return text if len(text) <= 1024 else text[:1023] + "…"


def skill_files(about: Mapping[str, Any], method_cls: type[Method], tree: Mapping[str, str]) -> SkillFolder:
    """SKILL.md, the method's supporting files and the export's provenance; SkillExportError when the method's
    state is no skill or playbook, or is empty in this version (also once repeated and empty bullets are dropped)."""
    method = str(about["method"])
    form = method_cls.skill_tree(tree)
    if form is None:
        raise SkillExportError(f"{method} keeps no skill or playbook (its state is its prompt, demos or memory); "
                               "export --as prompt or --as files instead")
    body = form.get("SKILL.md", "").strip()
    if not body:
        raise SkillExportError(f"{method}'s {method_cls.skill_kind} is empty in version "
                               f"{str(about['version'])[:12]}; nothing to export as a skill")
    clean = deduplicate(body)
    if clean.kept == 0 and clean.repeated + clean.empty:
        raise SkillExportError(f"{method}'s {method_cls.skill_kind} in version {str(about['version'])[:12]} has no "
                               f"bullet left once {clean.repeated} repeated and {clean.empty} empty ones are dropped; "
                               "nothing to export as a skill")
    body = clean.text.strip()
    instructions = tree.get("system.md", "").strip()
    front = {"name": skill_name(str(about.get("task_set") or about["benchmark"]), str(about["condition"])),
             "description": description(about, method_cls.skill_kind, _first_line(instructions))}
    text = "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=10_000) + "---\n\n" + body + "\n"
    if instructions:
        text += f"\n## Task instructions it was evolved with\n\n{instructions}\n"
    files = {p: t for p, t in form.items() if p != "SKILL.md"}
    about = {**about, "bullets_dropped": {"repeated": clean.repeated, "empty": clean.empty}}
    provenance = json.dumps(dict(about), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return SkillFolder({"SKILL.md": text, **files, PROVENANCE: provenance}, clean.repeated, clean.empty)
