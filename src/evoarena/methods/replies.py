"""Reply parsers more than one method reads a model's answer with (beside `jsonparse`): kept here so that no method
imports another."""

from __future__ import annotations

import re


def parse_instruction(raw: str, fences: str = "released") -> tuple[str | None, str]:
    """The text between the first and last ``` (a language tag on the opening fence is dropped); without a fenced
    pair, per `fences`, the whole reply stripped of a lone fence, or a refusal."""
    start = raw.find("```")
    end = raw.rfind("```")
    if start < 0 or end <= start:
        if fences == "strict":
            return None, "no fenced ``` block in the proposer output"
        body = raw.strip()
        if body.startswith("```"):
            body = body[re.match(r"```\S*\n?", body).end():]  # type: ignore[union-attr]  # always matches
        elif body.endswith("```"):
            body = body[:-3]
    else:
        body = raw[start + 3 : end]
        first, _, rest = body.partition("\n")
        if first.strip() and " " not in first.strip() and rest.strip():  # ```text / ```markdown
            body = rest
    body = body.strip()
    if not body:
        return None, "empty instruction"
    return body + "\n", ""
