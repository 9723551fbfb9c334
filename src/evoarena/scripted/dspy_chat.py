"""Reading DSPy's ChatAdapter prompts for scripted policies: the `[[ ## question ## ]]` of the last user message (the
task) and of the demos before it, and a reply in the adapter's own field format."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from evoarena.models.base import Message

_FIELD = re.compile(r"\[\[ ## question ## \]\]\n(.*?)(?=\n\n|\n\[\[ ## |\Z)", flags=re.S)


def is_dspy_prompt(messages: Sequence[Message]) -> bool:
    return bool(messages) and messages[-1].role == "user" and "[[ ## question ## ]]" in messages[-1].content


def questions(messages: Sequence[Message]) -> tuple[str, list[str]]:
    """The task's question and the demos' questions, in the order sent."""
    asked = [m.group(1).strip() for msg in messages if msg.role == "user" for m in _FIELD.finditer(msg.content)]
    return asked[-1], asked[:-1]


def answer(messages: Sequence[Message], solve: Callable[[str, list[str]], int]) -> str:
    """The reply ChatAdapter parses: `solve(question, demo questions)` in the `answer` field, then `completed`."""
    question, demos = questions(messages)
    return f"[[ ## answer ## ]]\n{solve(question, demos)}\n\n[[ ## completed ## ]]"
