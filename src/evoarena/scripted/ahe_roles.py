"""How a scripted policy plays AHE's evolve agent (evidence: mechanism): it reads the failed tasks of the round
(ahe/prompts/evolve.md), names the lesson of each (a `Lesson`, as for HGM's diagnosis), leaves out the lessons the
current harness already holds, and writes one change per new lesson into the component it may edit — a skill file of
its own where skills are editable, else the long-term memory, else the system prompt, else the first editable file
(then the lessons share one change) — predicting that the change fixes the tasks that taught it. With no new lesson
it leaves the harness as it is (`{"changes": [], "files": {}}`), as the prompt allows. The prompt is recognised by
its first line (`EVOLVE`)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from evoarena.models import Message
from evoarena.scripted.hgm_roles import Lesson

EVOLVE = "You are the evolve agent of a harness"
_FAILED = re.compile(r"^### (\S+)\nTask: (.*)\nOutput: .*\nFeedback: (.*)$", re.M)
_FILE = re.compile(r"^----- (\S+) -----\n(.*?)(?=^----- )", re.M | re.S)
EMPTY = "(empty: not written yet)"


def is_ahe_prompt(messages: Sequence[Message]) -> bool:
    return bool(messages) and EVOLVE in messages[-1].content


def harness_files(text: str) -> dict[str, str]:
    """The files of the prompt's `## Current harness` section (a file not written yet is "")."""
    part = text.split("## Current harness\n", 1)[-1].split("----- end of harness -----", 1)[0] + "----- "
    return {path: "" if body.strip() == EMPTY else body.rstrip("\n") for path, body in _FILE.findall(part)}


def editable(text: str) -> list[str]:
    """The names after `You may edit only:` (a directory as `skills/*.md`)."""
    found = re.search(r"^You may edit only: (.+?)\. Edits to any other file are refused\.$", text, re.M)
    return [] if found is None else [n.strip() for n in found.group(1).split(",")]


def _slug(lesson: str) -> str:
    words = [w for w in re.findall(r"[a-z]+", lesson.lower()) if len(w) >= 4]
    return "-".join(words[:4]) or "lesson"


def _appended(text: str, lines: Sequence[str]) -> str:
    return "\n".join([*([text.rstrip("\n")] if text.strip() else []), *(f"- {x}" for x in lines)]) + "\n"


def answer(messages: Sequence[Message], lesson: Lesson) -> str:
    """The change manifest for AHE's evolve prompt (the last message), in one ```json block."""
    text = messages[-1].content
    files, names = harness_files(text), editable(text)
    held = "\n".join(files.values())
    taught: dict[str, list[str]] = {}
    for task_id, task, feedback in _FAILED.findall(text.split("## Failed tasks in detail", 1)[-1]):
        found = lesson(task, feedback)
        if found is not None and found not in held:
            taught.setdefault(found, []).append(task_id)
    changes: list[dict[str, object]] = []
    new: dict[str, str] = {}
    target = next((n for n in ("memory/long_term.md", "system.md") if n in names),
                  next((n for n in names if not n.endswith("*.md")), None))
    for n, (found, fixes) in enumerate(taught.items(), 1):
        if "skills/*.md" in names:
            slug = _slug(found)
            path = next(f"skills/{slug}{i or ''}.md" for i in range(len(taught) + 1)
                        if f"skills/{slug}{i or ''}.md" not in {*new, *files})
            body = f"{found}\n"
        elif target is not None:
            path, body = target, _appended(new.get(target, files.get(target, "")), [found])
        else:
            break
        if path in new:  # one file shared by several lessons: one change holds them all
            change = next(c for c in changes if c["files"] == [path])
            change["predicted_fixes"] = [*change["predicted_fixes"], *fixes]  # type: ignore[misc]
            change["description"] = f"{change['description']}; {found}"
        else:
            changes.append({"id": f"chg-{n}", "type": "new", "description": found, "files": [path],
                            "failure_pattern": f"the tasks that need this rule failed: {', '.join(fixes)}",
                            "predicted_fixes": fixes, "risk_tasks": [],
                            "why_this_component": "a rule the assistant reads with each task"})
        new[path] = body
    # a backtick only ever stands inside a JSON string: escaped, a file that holds a fence cannot end the block
    body = json.dumps({"changes": changes, "files": new}, indent=1).replace("`", "\\u0060")
    return f"```json\n{body}\n```"
