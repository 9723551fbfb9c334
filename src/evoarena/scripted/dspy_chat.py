"""Reading DSPy's ChatAdapter prompts for scripted policies: a program's call (the `[[ ## question ## ]]` of the last
user message, the demos' questions before it and the instructions in the system message) answered in the adapter's
field format, and any other DSPy call (an optimiser's proposal, summary or advice) answered field by field, in
the adapter's format (ChatAdapter's fields or JSONAdapter's object)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from evoarena.models.base import Message

_FIELD = re.compile(r"\[\[ ## question ## \]\]\n(.*?)(?=\n\n|\n\[\[ ## |\Z)", flags=re.S)
_OUTPUTS = re.compile(r"Your output fields are:\n(.*?)(?:\nAll interactions|\Z)", flags=re.S)
_ONE_OUTPUT = re.compile(r"^\d+\. `(\w+)` \(([^)]*)\)", flags=re.M)
_JSON = "Outputs will be a JSON object"
_MODULE_NAMES = re.compile(r"\[\[ ## module_names ## \]\]\n(.*?)(?=\n\n|\n\[\[ ## |\Z)", flags=re.S)


def is_dspy_prompt(messages: Sequence[Message]) -> bool:
    """A DSPy adapter's prompt: its system message lists the output fields in the `[[ ## field ## ]]` structure
    (ChatAdapter) or as a JSON object (JSONAdapter)."""
    if not messages or "Your output fields are:" not in messages[0].content:  # a system message, or a probe's one
        return False
    return any(mark in messages[0].content for mark in ("[[ ## completed ## ]]", _JSON))


def is_program_call(messages: Sequence[Message]) -> bool:
    return messages[-1].role == "user" and "[[ ## question ## ]]" in messages[-1].content


def questions(messages: Sequence[Message]) -> tuple[str, list[str]]:
    """The task's question and the demos' questions, in the order sent."""
    asked = [m.group(1).strip() for msg in messages if msg.role == "user" for m in _FIELD.finditer(msg.content)]
    return asked[-1], asked[:-1]


def answer(messages: Sequence[Message], solve: Callable[[str, list[str], str], int],
           advise: Callable[[], str]) -> str:
    """Each output field the system message lists. A program's call: `solve(question, demo questions, system
    message)` in `answer`, a fixed sentence in any other field (ChainOfThought's `reasoning`). Any other DSPy call:
    `advise()` for text (a dict of it per module name for a dict field, as SIMBA's advice), a plain value for
    other types."""
    program = is_program_call(messages)
    found = _OUTPUTS.search(messages[0].content)
    values: dict[str, object] = {}
    for name, kind in _ONE_OUTPUT.findall(found.group(1) if found else ""):
        if program and name == "answer":
            question, demos = questions(messages)
            values[name] = solve(question, demos, messages[0].content)
        elif program:  # another field of the program's (ChainOfThought's `reasoning`)
            values[name] = "I apply what the instructions and the examples show."
        elif kind.startswith("dict"):
            names = _MODULE_NAMES.search(messages[-1].content)
            try:
                modules = json.loads(names.group(1)) if names else ["self"]
            except ValueError:
                modules = ["self"]
            values[name] = {m: advise() for m in modules}
        elif kind == "bool":
            values[name] = True
        elif kind in ("int", "float"):
            values[name] = 1
        else:
            values[name] = advise()
    if _JSON in messages[0].content:
        return json.dumps(values)
    parts = [f"[[ ## {k} ## ]]\n{json.dumps(v) if isinstance(v, dict) else v}" for k, v in values.items()]
    return "\n\n".join([*parts, "[[ ## completed ## ]]"])
