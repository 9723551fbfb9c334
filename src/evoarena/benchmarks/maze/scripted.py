"""`maze-explorer`: a scripted solver for the maze benchmark (evidence: mechanism). It heads for the exit when it
sees it, never turns straight back unless it must, and otherwise prefers the moves a harness note tells it to
("Prefer: east, south" in any system or user message), east and south by default."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evoarena.api import policy
from evoarena.models.base import GenParams, Message

_BACK = {"north": "south", "south": "north", "east": "west", "west": "east"}
_PREFER = re.compile(r"Prefer:\s*([a-z ,]+)", re.IGNORECASE)


@policy("maze-explorer")
def maze_explorer(messages: Sequence[Message], params: GenParams) -> str:
    text = messages[-1].content
    now = text.rsplit("Now:", 1)[-1]
    seen = re.search(r"You see the goal to the (\w+)", now)
    if seen:
        return seen.group(1)
    exits = re.search(r"Open directions: ([a-z, ]+)\.", now)
    options = [d.strip() for d in exits.group(1).split(",")] if exits else list(_BACK)
    moves = re.findall(r"^> (\w+)", text, re.MULTILINE)
    back = _BACK.get(moves[-1]) if moves else None
    found = next((m.group(1) for msg in messages for m in [_PREFER.search(msg.content)] if m), "east, south")
    prefer = [p.strip() for p in found.split(",") if p.strip() in _BACK] + list(_BACK)
    forward = [o for o in options if o != back] or options
    return min(forward, key=prefer.index)
