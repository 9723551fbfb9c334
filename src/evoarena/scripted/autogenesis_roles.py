"""How a scripted policy plays Autogenesis's proposer (evidence: mechanism). Reflect and select
(autogenesis/prompts/reflect.md): it names the lesson of the first failed task of the batch that no resource holds
yet (a `Lesson`, as for HGM's diagnosis) and selects the learnable resource to hold it — the memory where it is
learnable (a fact to recall), else the prompt (its first learnable section, where it lists sections) — with the
lesson as the change. Improve (autogenesis/prompts/improve.md): the current text with the requested change appended,
in one ``` block. A batch with no failure it has a lesson for, or no learnable resource, gives prose (no selection),
as a weak proposer's reply. Prompts are recognised by a phrase of each template (`REFLECT`, `IMPROVE`)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from evoarena.models import Message
from evoarena.scripted.hgm_roles import Lesson

REFLECT = "choose ONE learnable resource"
IMPROVE = "part of an assistant's harness:"
_RESOURCE = re.compile(r"^----- (\S+) \((\w+), (learnable|frozen)(?:; sections: (.*?))?\) -----\n(.*?)(?=^----- )",
                       re.M | re.S)
_TASK = re.compile(r"^## Task \d+: (solved|failed)\n(.*?)\nOutput: .*?\nFeedback: (.*?)$", re.M | re.S)
PREFERRED = ("memory", "prompt")  # where a lesson goes, in this order, among the learnable resources


def is_autogenesis_prompt(messages: Sequence[Message]) -> bool:
    text = messages[-1].content if messages else ""
    return REFLECT in text or (IMPROVE in text and "Change requested: " in text)


def _selection(text: str, lesson: Lesson) -> dict[str, str] | None:
    """The reflect reply's fields, or None when the policy has nothing to change."""
    block = text.split("----- end of resources -----", 1)[0] + "----- "
    resources = _RESOURCE.findall(block)
    held = "\n".join(r[4] for r in resources)
    learnable = {name: sections for name, _, mask, sections, _ in resources if mask == "learnable"}
    name = next((n for n in (*PREFERRED, *learnable) if n in learnable), None)
    if name is None:
        return None
    for solved, task, feedback in _TASK.findall(text.split("----- end of resources -----", 1)[-1]):
        found = None if solved == "solved" else lesson(task, feedback)
        if found is not None and found not in held:
            sections = re.findall(r"(\S+) \(learnable\)", learnable[name] or "")
            return {"reflection": f"A task failed because the answer broke a rule: {found}", "resource": name,
                    "section": sections[0] if sections else "", "change": found}
    return None


def answer(messages: Sequence[Message], lesson: Lesson) -> str:
    """The reply to Autogenesis's reflect or improve prompt (the last message)."""
    text = messages[-1].content
    if REFLECT in text:
        chosen = _selection(text, lesson)
        if chosen is None:
            return "Every failure here is covered by the resources already; I would not change anything."
        return "```json\n" + json.dumps(chosen) + "\n```"
    current = text.split("```\n", 1)[1].split("\n```", 1)[0] if "```\n" in text else ""
    change = text.split("Change requested: ", 1)[1].split("\n", 1)[0].strip()
    new = current if change in current else f"{current.rstrip()}\n{change}".strip()
    return f"```\n{new}\n```"
