"""Continual Harness's files in the harness. What the refiner edits: `prompt.md` (the strategic guidance, the
released base prompt), `skills/<id>.md` and `memory/<id>.md`; `system.md` is the benchmark's system prompt, fixed
(read-only, as released). The method's own: `continual/carry.json` (what the next episode carries over — the
harness's age in steps, the skills whose change is still being measured, the last refinement summaries — written by
the episode agent at the end of a practice episode) and `continual/log.json` (one entry per practice episode)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

SYSTEM, PROMPT, SKILLS, MEMORY = "system.md", "prompt.md", "skills/", "memory/"
STATE_DIR = "continual/"
CARRY, LOG = STATE_DIR + "carry.json", STATE_DIR + "log.json"
DEFAULT_PROMPT = ("Make steady progress toward the goal. When an action changes nothing, do not repeat it: try "
                  "another. Use the skills and memory below when they apply.")
_ENTRY = re.compile(r"^(skills|memory)/([a-z0-9_\-]+)\.md$")


def skill_path(eid: str) -> str:
    return f"{SKILLS}{eid}.md"


def memory_path(eid: str) -> str:
    return f"{MEMORY}{eid}.md"


def entries(tree: Mapping[str, str], kind: str) -> dict[str, str]:
    """{id: text} of the `skills` or `memory` entries (`<kind>/<id>.md`, one level), by id."""
    out = {}
    for path in sorted(tree):
        m = _ENTRY.match(path)
        if m and m.group(1) == kind:
            out[m.group(2)] = tree[path]
    return out


def refinable(path: str) -> bool:
    """Whether the refiner may write `path`: the strategic prompt, a skill or a memory entry."""
    return path == PROMPT or _ENTRY.match(path) is not None


@dataclass
class Carry:
    """What an episode hands the next: the harness's age (steps played under it), the skills changed by the last
    refinement still waiting for their after-window (path, previous text or None for a new one, the window before),
    the last refinement summaries the solver is shown, and a refinement made after the episode's last step."""

    age: int = 0
    watches: list[dict[str, Any]] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    at_end: dict[str, Any] | None = None


def read_carry(tree: Mapping[str, str]) -> Carry:
    text = tree.get(CARRY)
    if not text:
        return Carry()
    data = json.loads(text)
    return Carry(int(data.get("age", 0)), list(data.get("watches", [])), list(data.get("summaries", [])),
                 data.get("at_end"))


def dump_carry(carry: Carry) -> str:
    return json.dumps(asdict(carry), indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def read_log(tree: Mapping[str, str]) -> list[dict[str, Any]]:
    text = tree.get(LOG)
    return list(json.loads(text)) if text else []


def dump_log(log: list[dict[str, Any]]) -> str:
    return json.dumps(log, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
