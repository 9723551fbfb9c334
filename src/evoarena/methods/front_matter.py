"""The `---` block of `key: value` lines that opens an Agent Skill's SKILL.md, read apart from the body (methods whose
state holds skills show the body and the description, never the block itself)."""

from __future__ import annotations

import re

_FRONT = re.compile(r"^---\n(.*?)\n---\n?", flags=re.S)


def strip_front_matter(text: str) -> tuple[dict[str, str], str]:
    """(the `key: value` lines of a leading `---` block, the text after it); ({}, text) when there is none."""
    bare = text.lstrip("\ufeff")
    m = _FRONT.match(bare)
    if not m:
        return {}, text
    fields = {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in m.group(1).splitlines()) if k.strip()}
    return fields, bare[m.end():]
