"""How a scripted policy plays HGM's two proposer calls (evidence: mechanism): the diagnosis names a lesson for the
failed task shown (HGM's JSON, the lesson as `problem_description`), and the improvement appends the requested
change to the harness it is shown, in one ``` block. A task the policy has no lesson for, or a harness that already
holds the lesson, gives a reply HGM rejects (prose, or a rewrite that repeats its parent), as a weak proposer would.
Prompts are recognised by a phrase of each template (`DIAGNOSE`, `IMPROVE`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from evoarena.models import Message

DIAGNOSE = "identify ONE change to the harness"
IMPROVE = "Requested change:"
NO_FAILURE = "(no failed task recorded yet)"

Lesson = Callable[[str, str], str | None]
"""The lesson for a failed task (its prompt, the grader's feedback); None when the policy has none."""


def between(text: str, name: str) -> str:
    """The text between HGM's `----- <name> Start -----` and `----- <name> End -----` markers ("" when absent)."""
    start, end = f"----- {name} Start -----\n", f"\n----- {name} End -----"
    if start not in text:
        return ""
    return text.split(start, 1)[1].split(end, 1)[0]


def is_hgm_prompt(messages: Sequence[Message]) -> bool:
    text = messages[-1].content if messages else ""
    return DIAGNOSE in text or IMPROVE in text


def answer(messages: Sequence[Message], lesson: Lesson) -> str:
    """The reply to HGM's diagnosis or improvement prompt (the last message)."""
    text = messages[-1].content
    if DIAGNOSE in text:
        task = between(text, "Task").strip()
        found = None if task == NO_FAILURE else lesson(task, between(text, "Grader Feedback"))
        if found is None:
            return "Nothing in this log points to a change of the harness."
        return "```json\n" + json.dumps({"log_summarization": "the answer broke the task's rule",
                                         "potential_improvements": [found], "improvement_proposal": found,
                                         "problem_description": found}) + "\n```"
    harness = between(text, "Harness").strip()
    problem = text.split(IMPROVE, 1)[1].split("\n\n", 1)[0].strip()
    new = harness if problem in harness else f"{harness}\n{problem}".strip()
    return f"```\n{new}\n```"
