"""Continual Harness's files in the harness. What the refiner edits: `prompt.md` (the strategic guidance, the
released base prompt), `skills/<id>.md` and `memory/<id>.md`; `system.md` is the benchmark's system prompt, fixed
(read-only, as released). The method's own: `continual/carry.json` (what the next episode carries over — the
harness's age in steps, the skills whose change is still being measured, the last refinement summaries — written by
the episode agent at the end of a practice episode) and `continual/log.json` (one entry per practice episode)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, RootModel

from evoarena.harness.state import Absent, parse_state

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


Window = dict[str, int]
"""`stuck.window_stats`: {steps, stuck, pct} of a window of steps."""


class Check(BaseModel):
    """A watched skill resolved at a refinement: its windows before and after, whether a revert was due and made."""

    skill: str
    new: bool
    before: Window
    after: Window
    due: bool
    reverted: bool


class Refused(BaseModel):
    entry: str
    reason: str


class PassResult(BaseModel):
    """What one refiner pass did: `status` (rewritten | unchanged | applied | rejected) and, as it applies, the
    prompt's length, the entries added, updated and refused with the analysis, or why the reply was rejected."""

    status: str
    reason: Absent[str] = None
    raw: Absent[str] = None
    chars: Absent[int] = None
    added: Absent[list[str]] = None
    updated: Absent[list[str]] = None
    analysis: Absent[str] = None
    refused: Absent[list[Refused]] = None


class RefinementRecord(BaseModel):
    """One refinement at `step` (`clock` on the cadence's clock): the window measured, the watched skills checked
    and reverted, the skills flagged as underperforming, each pass's result, the refiner calls and the summary the
    solver is shown next."""

    step: int
    clock: int
    window: Window
    checked: list[Check] = []
    reverted: list[str] = []
    flagged: list[str] = []
    passes: dict[str, PassResult] = {}
    calls: int = 0
    summary: str = ""


class Watch(BaseModel):
    """A skill changed at a refinement, waiting for its after-window: its previous text (None: a new skill), the
    text written and the window before."""

    id: str
    path: str
    previous: str | None
    text: str
    before: Window
    clock: int


class Carry(BaseModel):
    """What an episode hands the next: the harness's age (steps played under it), the skills changed by the last
    refinement still waiting for their after-window, the last refinement summaries the solver is shown, and a
    refinement made after the episode's last step."""

    age: int = 0
    watches: list[Watch] = []
    summaries: list[str] = []
    at_end: RefinementRecord | None = None


class ClockWindow(BaseModel):
    """A refinement's window with the clock it ran at."""

    clock: int
    steps: int
    stuck: int
    pct: int


class LogEntry(BaseModel):
    """One practice episode: its outcome, the harness's age, the refinements made (at which clocks, their windows,
    the skills reverted, rejected replies, prompt rewrites), the episode's stuck window and the files changed."""

    episode: int
    score: float
    won: bool
    steps: int
    age: int
    refinements: int
    at: list[int]
    reverted: list[str]
    rejected: int
    prompt_rewrites: int
    stuck: Window
    windows: list[ClockWindow]
    changed: list[str]


class Log(RootModel[list[LogEntry]]):
    """`continual/log.json`: the practice episodes in order (one JSON list)."""


def read_carry(tree: Mapping[str, str]) -> Carry:
    text = tree.get(CARRY)
    return parse_state(CARRY, text, Carry) if text else Carry()


def read_log(tree: Mapping[str, str]) -> Log:
    text = tree.get(LOG)
    return parse_state(LOG, text, Log) if text else Log([])
