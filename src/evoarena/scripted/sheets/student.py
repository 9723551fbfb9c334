"""`sheets-student`: a scripted model for mechanism tests of the sheets benchmark (evidence: mechanism).

As solver it reads the generated instruction back to its family and stated parameters and writes that family's
reference program, except in the sequential-scan family, where it makes the seed's case-study mistake: it
never moves the reference value, unless the text before the task (system prompt, reflections, skills…)
already says to update the reference. As reflector (or any other non-solver role) it states that rule when
the text it reads is about a sequential-scan task whose feedback shows wrong cells. It cannot read
SpreadsheetBench's own instructions and then copies the input unchanged. SkillProx's update prompts and the
rules its skills may state are handled in `skill_policy`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evoarena.api import policy
from evoarena.benchmarks.sheets.families import match_instruction
from evoarena.benchmarks.sheets.reference import render_program
from evoarena.models.base import GenParams, Message
from evoarena.scripted.sheets.skills import follow_skill, skillprox_reply

MARKER = "## Spreadsheet task"
RULE = (
    "In a sequential scan, update the reference value to the flagged row's value each time the condition holds, "
    "before checking the next row."
)
LESSON = "update the reference"
MISTAKE = "        if hit:\n            reference = value  # update the reference\n"
COPY = (
    "```python\nimport shutil\n\n\ndef solve(input_path, output_path):\n"
    "    shutil.copyfile(input_path, output_path)\n```\n"
)


def _section(task: str, title: str) -> str:
    m = re.search(rf"^### {re.escape(title)}\n(.*?)(?=^### |\Z)", task, flags=re.M | re.S)
    return m.group(1).strip() if m else ""


def student_program(task: str, context: str) -> str | None:
    """The program the student writes for a task text (None if it cannot read the instruction)."""
    found = match_instruction(_section(task, "Instruction"))
    if found is None:
        return None
    family, template, params = found
    program = render_program(family.name, template.program_params(params), _section(task, "Target range"))
    if family.name == "seq_scan" and LESSON not in context.lower():
        program = program.replace(MISTAKE, "")
    return follow_skill(family.name, program, context)


@policy("sheets-student")
def sheets_student(messages: Sequence[Message], params: GenParams) -> str:
    text = "\n\n".join(m.content for m in messages)
    reply = skillprox_reply(text)  # SkillProx's diagnoser, momentum agent, patcher and shrinker
    if reply is not None:
        return reply
    at = text.rfind(MARKER)
    if at < 0:
        return "I do not see a spreadsheet task."
    context, task = text[:at], text[at:]
    if not text.rstrip().endswith("Reply with one ```python code block."):  # a reflector or curator
        found = match_instruction(_section(task, "Instruction").split("\n\n")[0])
        if found is not None and found[0].name == "seq_scan" and "expected" in task:
            return RULE
        return "Check every target cell against the instruction before saving."
    program = student_program(task, context)
    return COPY if program is None else f"```python\n{program}```\n"
