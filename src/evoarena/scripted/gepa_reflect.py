"""GEPA's reflection prompt read by a scripted proposer: the current instruction kept, a rule added for each failed
example. The `gepa` package and evoarena's `gepa` send the same template ("I provided an assistant with the following
instructions…", examples under `# Example N` with `## Inputs`, `## Generated Outputs`, `## Feedback`)."""

from __future__ import annotations

import re
from collections.abc import Callable

PHRASE = "I provided an assistant with the following instructions"
_INSTRUCTION = re.compile(r"to perform a task for me:\n```\n(.*?)\n```\n", re.S)
_EXAMPLE = re.compile(r"^# Example \d+\s*$", re.M)


def is_gepa_reflection(text: str) -> bool:
    return PHRASE in text


def examples(text: str) -> list[tuple[str, str]]:
    """(inputs, feedback) of every example in the prompt, each stripped."""
    body = text.split("The following are examples", 1)[-1]
    out = []
    for block in _EXAMPLE.split(body)[1:]:
        inputs = block.split("## Inputs", 1)[-1].split("## Generated Outputs", 1)[0]
        feedback = block.split("## Feedback", 1)[-1].split("Your task is to write a new instruction", 1)[0]
        out.append((inputs.strip(), feedback.strip().strip("`").strip()))
    return out


def gepa_instruction(text: str, rule_for: Callable[[str, str], str | None]) -> str:
    """The old instruction with `rule_for(inputs, feedback)` appended for each example whose rule it lacks, in a
    ``` block (what GEPA's `output_extractor` reads)."""
    found = _INSTRUCTION.search(text)
    instruction = found.group(1).strip() if found else ""
    rules: list[str] = []
    for inputs, feedback in examples(text):
        rule = rule_for(inputs, feedback)
        if rule and rule not in instruction and rule not in rules:
            rules.append(rule)
    return "```\n" + "\n".join([instruction, *rules]).strip() + "\n```"
