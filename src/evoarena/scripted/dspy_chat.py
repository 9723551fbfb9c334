"""Reading DSPy's ChatAdapter prompts for scripted policies: a program's call (the `[[ ## question ## ]]` of the last
user message, the demos' questions before it and the instructions in the system message) answered in the adapter's
field format, and any other DSPy call (an optimiser's proposal, summary or advice) answered field by field."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from evoarena.models.base import Message

_FIELD = re.compile(r"\[\[ ## question ## \]\]\n(.*?)(?=\n\n|\n\[\[ ## |\Z)", flags=re.S)
_OUTPUTS = re.compile(r"Your output fields are:\n(.*?)(?:\nAll interactions|\Z)", flags=re.S)
_ONE_OUTPUT = re.compile(r"^\d+\. `(\w+)` \(([^)]*)\)", flags=re.M)
_MODULE_NAMES = re.compile(r"\[\[ ## module_names ## \]\]\n(.*?)(?=\n\n|\n\[\[ ## |\Z)", flags=re.S)


def is_dspy_prompt(messages: Sequence[Message]) -> bool:
    """A DSPy ChatAdapter prompt: its system message lays out the `[[ ## field ## ]]` structure."""
    return bool(messages) and messages[0].role == "system" and "Your output fields are:" in messages[0].content \
        and "[[ ## completed ## ]]" in messages[0].content


def is_program_call(messages: Sequence[Message]) -> bool:
    return messages[-1].role == "user" and "[[ ## question ## ]]" in messages[-1].content


def questions(messages: Sequence[Message]) -> tuple[str, list[str]]:
    """The task's question and the demos' questions, in the order sent."""
    asked = [m.group(1).strip() for msg in messages if msg.role == "user" for m in _FIELD.finditer(msg.content)]
    return asked[-1], asked[:-1]


def answer(messages: Sequence[Message], solve: Callable[[str, list[str], str], int],
           advise: Callable[[], str]) -> str:
    """A program's call: `solve(question, demo questions, system message)` in the `answer` field. Any other DSPy
    call: each output field the system message lists, `advise()` for text (a dict of it per module name for a
    dict field, as SIMBA's advice), a plain value for other types."""
    if is_program_call(messages):
        question, demos = questions(messages)
        return f"[[ ## answer ## ]]\n{solve(question, demos, messages[0].content)}\n\n[[ ## completed ## ]]"
    found = _OUTPUTS.search(messages[0].content)
    parts = []
    for name, kind in _ONE_OUTPUT.findall(found.group(1) if found else ""):
        if kind.startswith("dict"):
            names = _MODULE_NAMES.search(messages[-1].content)
            try:
                modules = json.loads(names.group(1)) if names else ["self"]
            except ValueError:
                modules = ["self"]
            value = json.dumps({m: advise() for m in modules})
        elif kind == "bool":
            value = "True"
        elif kind in ("int", "float"):
            value = "1"
        else:
            value = advise()
        parts.append(f"[[ ## {name} ## ]]\n{value}")
    return "\n\n".join([*parts, "[[ ## completed ## ]]"])
