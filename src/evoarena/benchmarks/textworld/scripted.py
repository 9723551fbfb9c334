"""`textworld-explorer`: a scripted solver for the textworld benchmark (evidence: mechanism). It takes the first
listed action it has not taken in the shown steps, preferring actions with a word a harness note names
("Prefer: take, open" in any message); a rule follower, not a player."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evoarena.api import policy
from evoarena.models.base import GenParams, Message

_PREFER = re.compile(r"Prefer:\s*([a-z ,]+)", re.IGNORECASE)


@policy("textworld-explorer")
def textworld_explorer(messages: Sequence[Message], params: GenParams) -> str:
    text = messages[-1].content
    listed = re.search(r"^Actions you can take: (.+)$", text, re.MULTILINE)
    actions = [a.strip() for a in listed.group(1).split(", ")] if listed else ["look"]
    done = set(re.findall(r"^> (.+)$", text, re.MULTILINE))
    found = next((m.group(1) for msg in messages for m in [_PREFER.search(msg.content)] if m), "")
    words = [w.strip() for w in found.split(",") if w.strip()]
    fresh = [a for a in actions if a not in done] or actions
    preferred = [a for a in fresh if any(a.split()[0] == w for w in words)]
    return (preferred or fresh)[0]
