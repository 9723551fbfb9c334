"""The trace page's SQL: one attempt row with its cell's condition, its execution output, the other calls of its
unit, the steps of an episode (an interactive task's answer carries a `trace` list) and a call's neighbours."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from evoarena.store.db import RunStore

OUTPUT_CHARS = 200_000  # an execution output longer than this is shown cut (the blob keeps all of it)
UNIT_CALLS = 200  # at most this many calls of a unit are listed


@dataclass(frozen=True)
class AttemptDetail:
    """An attempt row (table `attempts`) with its cell's condition and seed."""

    id: int
    cell: str
    condition: str | None
    seed: int | None
    phase: str
    unit_key: str
    task_id: str
    version_id: str
    answer: str | None
    score: float | None
    passed: bool | None
    error: str | None
    parse_error: str | None
    output_blob: str | None
    call_id: int | None
    created_at: str


def attempt(store: RunStore, attempt_id: int) -> AttemptDetail | None:
    r = store.query_one(
        "SELECT a.*, c.condition, c.seed FROM attempts a LEFT JOIN cells c ON c.cell = a.cell WHERE a.id = ?",
        [attempt_id])
    if r is None:
        return None
    return AttemptDetail(
        id=int(r["id"]), cell=r["cell"], condition=r["condition"], seed=r["seed"], phase=r["phase"],
        unit_key=r["unit_key"], task_id=r["task_id"], version_id=r["version_id"], answer=r["answer"],
        score=None if r["score"] is None else float(r["score"]),
        passed=None if r["passed"] is None else bool(r["passed"]), error=r["error"], parse_error=r["parse_error"],
        output_blob=r["output_blob"], call_id=None if r["call_id"] is None else int(r["call_id"]),
        created_at=r["created_at"],
    )  # fmt: skip


def output_text(store: RunStore, digest: str | None) -> tuple[str | None, bool]:
    """An attempt's execution output (its blob; None when it has none or the file is gone) and whether it was cut."""
    if not digest:
        return None, False
    try:
        text = store.blobs.get_text(digest)
    except (OSError, UnicodeDecodeError):
        return None, False
    return (text[:OUTPUT_CHARS], True) if len(text) > OUTPUT_CHARS else (text, False)


@dataclass(frozen=True)
class CallBrief:
    """A ledger row in a list: enough to tell it apart and link to it."""

    id: int
    role: str
    phase: str | None
    input_tokens: int
    output_tokens: int
    cached: bool
    error: str | None


def unit_calls(store: RunStore, cell: str, unit: str) -> list[CallBrief]:
    """The calls a cell made in one unit (a practice step, a test task), oldest first (the cell's index, then the
    unit)."""
    rows = store.query("SELECT id, role, phase, input_tokens, output_tokens, cached, error FROM calls"
                       " WHERE cell = ? AND unit = ? ORDER BY id LIMIT ?", [cell, unit, UNIT_CALLS])
    return [CallBrief(int(r["id"]), str(r["role"]), r["phase"], int(r["input_tokens"]), int(r["output_tokens"]),
                      bool(r["cached"]), r["error"]) for r in rows]


def call_attempts(store: RunStore, cell: str | None, call_id: int) -> list[int]:
    """The attempt rows that link to a call (searched within its cell: the attempts (cell, phase) index)."""
    if cell is None:
        return []
    return [int(r["id"]) for r in store.query("SELECT id FROM attempts WHERE cell = ? AND call_id = ? ORDER BY id",
                                              [cell, call_id])]


def neighbours(store: RunStore, call_id: int) -> tuple[int | None, int | None]:
    """The ledger rows just before and after a call (by id)."""
    prev = store.query_one("SELECT MAX(id) AS id FROM calls WHERE id < ?", [call_id])
    nxt = store.query_one("SELECT MIN(id) AS id FROM calls WHERE id > ?", [call_id])
    return (None if not prev or prev["id"] is None else int(prev["id"]),
            None if not nxt or nxt["id"] is None else int(nxt["id"]))


@dataclass(frozen=True)
class EpisodeStep:
    """One step of an episode (an interactive task's answer's `trace`): what the solver replied, the action taken,
    the score after it, what came back, and an episode agent's note."""

    step: int
    kind: str
    call_id: int | None
    reply: str
    action: str
    score: float | None
    observation: str
    note: str


@dataclass(frozen=True)
class Episode:
    outcome: dict[str, Any]  # the answer without its trace: score, max_score, steps, stopped…
    steps: list[EpisodeStep]


def episode(store: RunStore, answer: str | None) -> Episode | None:
    """The episode an attempt's answer holds; None when the answer is no episode (no JSON object with a `trace`
    list). Each step's reply is its call's response text (one query for the calls, one per distinct response)."""
    try:
        data = json.loads(answer or "")
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("trace"), list):
        return None
    steps = [s for s in data["trace"] if isinstance(s, dict)]
    ids = sorted({int(s["call_id"]) for s in steps if isinstance(s.get("call_id"), int)})
    replies: dict[int, str] = {}
    if ids:
        rows = store.query(f"SELECT id, response_blob FROM calls WHERE id IN ({','.join('?' * len(ids))})", ids)
        texts: dict[str, str] = {}
        for r in rows:
            blob = r["response_blob"]
            if blob is not None:
                if blob not in texts:
                    texts[blob] = store.get_response(blob).text.strip()
                replies[int(r["id"])] = texts[blob]
    out = []
    for i, s in enumerate(steps):
        note = s.get("agent") or {}
        shown = note.get("summary") if isinstance(note, dict) else None
        call_id = s.get("call_id") if isinstance(s.get("call_id"), int) else None
        score = s.get("score")
        out.append(EpisodeStep(
            step=int(s.get("step", i)), kind=str(s.get("kind", "")), call_id=call_id,
            reply=replies.get(call_id, "") if call_id is not None else "", action=str(s.get("action", "")),
            score=float(score) if isinstance(score, int | float) else None,
            observation=str(s.get("observation", "")),
            note=str(shown or (json.dumps(note, ensure_ascii=False, sort_keys=True) if note else "")),
        ))  # fmt: skip
    return Episode({k: v for k, v in data.items() if k != "trace"}, out)
