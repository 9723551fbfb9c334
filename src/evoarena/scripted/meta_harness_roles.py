"""How a scripted policy plays Meta-Harness's proposer over the plain-text tool protocol (evidence: mechanism;
meta_harness/prompts/propose.md). Where its access mode shows traces (`full`) and it has a tool call left, it first
reads the current best candidate's traces (`TOOL: read candidates/<best>/traces.md`) and draws its lessons from them
(a `Study`: e.g. the lesson of each failed task, `of_failures`). Where it cannot read traces, it guesses from what it
knows of the domain (`known`: lessons a model brings, none for a hidden rule), one guess per candidate. Then it
answers `FINAL:` with the lessons the best harness does not hold yet: the exploit candidate appends them to the
system prompt, the explore candidate writes them as notes (`memory/lessons.md`), a different component; with
nothing new it proposes a short note to read the task closely (a candidate that still passes the interface check,
as a weak proposer's would). It names the best as the candidate it edits (`base_system`) where asked. The prompt is
recognised by its first line (`PROPOSE`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from evoarena.models import Message
from evoarena.scripted.hgm_roles import Lesson

PROPOSE = "You improve the harness of an assistant that solves tasks"
NOTES = "memory/lessons.md"
FALLBACK = "Read the whole task before answering, and answer in the form it asks for."
_FILE = re.compile(r"^----- (\S+) -----\n(.*?)(?=^----- )", re.M | re.S)
_TRACE = re.compile(r"^## (\S+)\n### input\n(.*?)\n### output\n.*?\n### feedback\n(.*?)(?=\n## |\n\[you\]|\Z)",
                    re.M | re.S)


def is_meta_harness_prompt(messages: Sequence[Message]) -> bool:
    return bool(messages) and PROPOSE in messages[-1].content


def _best(text: str) -> tuple[str, dict[str, str]]:
    found = re.search(r"The current best harness \((\S+), accuracy", text)
    block = text.split("----- end of harness -----", 1)[0] + "----- "
    return (found.group(1) if found else "c0"), {p: b.rstrip("\n") for p, b in _FILE.findall(block)}


Study = Callable[[Sequence[tuple[str, str]]], list[str]]
"""The lessons a policy draws from the traces it read: (task, feedback) of every task shown."""


def of_failures(lesson: Lesson) -> Study:
    """A `Study` that names the lesson of each failed task (feedback not `Correct…`), once each, in their order."""
    def study(traces: Sequence[tuple[str, str]]) -> list[str]:
        out: list[str] = []
        for task, feedback in traces:
            found = None if feedback.startswith("Correct") else lesson(task, feedback)
            if found is not None and found not in out:
                out.append(found)
        return out
    return study


def traces(transcript: str) -> list[tuple[str, str]]:
    """(task, feedback) of every trace the transcript's tool outputs hold."""
    return [(task, feedback.strip()) for _, task, feedback in _TRACE.findall(transcript)]


def answer(messages: Sequence[Message], study: Study, known: Sequence[str] = ()) -> str:
    """The reply to Meta-Harness's proposal prompt (the last message): a tool call or the FINAL proposal."""
    text = messages[-1].content
    best, files = _best(text)
    transcript = text.split("\nConversation so far:\n", 1)[1] if "\nConversation so far:\n" in text else ""
    full = "(full access)" in text
    calls = re.search(r"You may use up to (\d+) tools", text)
    if full and not transcript and calls and int(calls.group(1)) > 0:
        return f"I will read where the best harness fails.\nTOOL: read candidates/{best}/traces.md"
    held = "\n".join(files.values())
    explore = "Your job for this candidate: explore" in text
    if full:
        new = [x for x in study(traces(transcript)) if x not in held]
    else:  # a guess: one known lesson not held yet, another one for the explore candidate
        guesses = [x for x in known if x not in held]
        new = guesses[1:2] or guesses[:1] if explore else guesses[:1]
    path = NOTES if explore else "system.md"
    lines = new or ([] if FALLBACK in held else [FALLBACK])
    body = "\n".join([*([files[path].rstrip()] if files.get(path, "").strip() else []), *(f"- {x}" for x in lines)])
    proposal: dict[str, object] = {
        "name": "lessons" if new else "read-closely",
        "hypothesis": ("no failure shows a rule to add; a reminder to read the task" if not new else
                       f"the failed tasks need {len(new)} rule(s) the harness does not state" if full else
                       "a guess, without traces: a rule such tasks often need"),
        "changes": f"{'notes in ' + NOTES if explore else 'system prompt'}: " + ("; ".join(lines) or "(none)"),
        "expected_efficiency": "more characters: one line per rule", "files": {path: body + "\n"}}
    if "\"base_system\"" in text:
        proposal["base_system"] = best
    return "FINAL:\n```json\n" + json.dumps(proposal, indent=1).replace("`", "\\u0060") + "\n```"  # as ahe_roles
