"""A scripted Dynamic Cheatsheet curator (evidence: mechanism): it keeps the previous sheet and adds, as one line, the
rule a `rule` function gives for the problem in the prompt (the cumulative curator's problem, or the retrieval
variant's next problem), so a student policy that knows its families' rules can curate."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from evoarena.models.base import Message

HEAD = "# Cheatsheet curator"
_PROBLEM = re.compile(r"^## (?:Problem|Next problem)\n(.+?)(?:\n\n## |\n\nWrite the complete|\Z)", re.M | re.S)
_SHEET = re.compile(r"^## Previous cheatsheet\n(.*?)(?:\n\n## |\n\nWrite the complete|\Z)", re.M | re.S)


def is_curator_prompt(messages: Sequence[Message]) -> bool:
    return bool(messages) and messages[-1].content.lstrip().startswith(HEAD)


def answer(messages: Sequence[Message], rule: Callable[[str], str | None]) -> str:
    """The new sheet: the old one's lines, plus the problem's rule when the sheet does not hold it yet."""
    text = messages[-1].content
    old = _SHEET.search(text)
    lines = [] if old is None or old.group(1).strip() == "(empty)" else old.group(1).strip().splitlines()
    problem = _PROBLEM.search(text)
    new = rule(problem.group(1).strip()) if problem else None
    if new and not any(new in line for line in lines):
        lines.append(f"- {new}")
    return "<cheatsheet>\n" + ("\n".join(lines) or "(empty)") + "\n</cheatsheet>"
