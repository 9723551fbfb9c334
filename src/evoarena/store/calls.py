"""Reading the call ledger back: ledger rows by cell, role, task, attempt or phase, and each call's full texts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from evoarena.codec import to_plain
from evoarena.store.db import RunStore
from evoarena.store.texts import TextMessage, TextResponse

CellMatch = Literal["exact", "prefix", "auto"]


@dataclass(frozen=True)
class CallRow:
    """One ledger row (table `calls`); `request_blob`/`response_blob` address its texts (None when not kept)."""

    id: int
    cell: str | None
    phase: str | None
    unit: str | None
    role: str
    model: str
    backend: str
    model_id: str
    params: dict[str, Any]
    prompt_hash: str
    cache_key: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    cost_usd: float
    cached: bool
    retries: int
    error: str | None
    created_at: str
    request_blob: str | None
    response_blob: str | None
    prompt_format: str | None = None  # embedded: "chat-template" | "plain"; None: messages sent as they are
    input_tokens_evaluated: int | None = None  # prompt tokens the model computed (the rest reused); None: unknown

    @classmethod
    def from_db(cls, r: dict[str, Any]) -> CallRow:
        return cls(
            id=int(r["id"]), cell=r["cell"], phase=r["phase"], unit=r.get("unit"), role=r["role"], model=r["model"],
            backend=r["backend"], model_id=r["model_id"], params=json.loads(r["params"]),
            prompt_hash=r["prompt_hash"], cache_key=r["cache_key"], input_tokens=int(r["input_tokens"]),
            output_tokens=int(r["output_tokens"]), latency_s=float(r["latency_s"]), cost_usd=float(r["cost_usd"]),
            cached=bool(r["cached"]), retries=int(r["retries"]), error=r["error"], created_at=r["created_at"],
            request_blob=r.get("request_blob"), response_blob=r.get("response_blob"),
            prompt_format=r.get("prompt_format"),
            input_tokens_evaluated=None if r.get("input_tokens_evaluated") is None
            else int(r["input_tokens_evaluated"]),
        )  # fmt: skip


@dataclass(frozen=True)
class LedgerOutcome:
    """What a ledger row says of a call's outcome and spend, without its params or texts: what the report counts
    (reading every row's params back costs more than the rest of the report's reading of the ledger)."""

    id: int
    cell: str | None
    phase: str | None
    role: str
    model: str
    model_id: str
    cache_key: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float
    cached: bool
    error: str | None
    input_tokens_evaluated: int | None


def ledger_outcomes(store: RunStore) -> list[LedgerOutcome]:
    """Every ledger row's outcome, in the order the calls were made."""
    rows = store.query(
        "SELECT id, cell, phase, role, model, model_id, cache_key, input_tokens, output_tokens, cost_usd, latency_s,"
        " cached, error, input_tokens_evaluated FROM calls ORDER BY id")
    return [LedgerOutcome(
        id=int(r["id"]), cell=r["cell"], phase=r["phase"], role=r["role"], model=r["model"], model_id=r["model_id"],
        cache_key=r["cache_key"], input_tokens=int(r["input_tokens"]), output_tokens=int(r["output_tokens"]),
        cost_usd=float(r["cost_usd"]), latency_s=float(r["latency_s"]), cached=bool(r["cached"]), error=r["error"],
        input_tokens_evaluated=None if r["input_tokens_evaluated"] is None else int(r["input_tokens_evaluated"]),
    ) for r in rows]  # fmt: skip


@dataclass(frozen=True)
class Conversation:
    """A call with its exact messages and response. `messages` is None when the store predates kept texts;
    `response` is None for a provider error (or when not kept)."""

    call: CallRow
    messages: list[TextMessage] | None
    response: TextResponse | None

    @property
    def kept(self) -> bool:
        """Whether this call's texts were kept (stores written before texts were kept have none)."""
        return self.call.request_blob is not None

    def trace_record(self) -> dict[str, Any]:
        """What `evoarena trace --json` shows of it: the ledger row's fields, whether its texts were kept, and the
        texts."""
        return {**to_plain(self.call), "kept": self.kept, "messages": to_plain(self.messages),
                "response": to_plain(self.response)}


def find_calls(
    store: RunStore,
    *,
    cell: str | None = None,
    cell_match: CellMatch = "exact",
    role: str | None = None,
    task: str | None = None,
    attempt: int | None = None,
    phase: str | None = None,
    limit: int | None = 50,
) -> list[CallRow]:
    """The last `limit` ledger rows matching every given filter, oldest first.

    `cell`: with `cell_match` "exact" that cell, "prefix" every cell starting with it, "auto" the exact cell when
    some call has it and otherwise the prefix. `task`: calls linked from an attempt on
    that task (`attempts.call_id`) or whose unit key has the task id as one of its `/`-separated parts.
    `attempt`: the call linked from that attempt row (none when the attempt carries no call_id)."""
    where: list[str] = []
    args: list[Any] = []
    if cell is not None:
        if cell_match == "auto":
            exact = store.query_one("SELECT 1 AS hit FROM calls WHERE cell = ? LIMIT 1", [cell]) is not None
            cell_match = "exact" if exact else "prefix"
        if cell_match == "prefix":
            where.append("substr(cell, 1, length(?)) = ?")
            args += [cell, cell]
        else:
            where.append("cell = ?")
            args.append(cell)
    if role is not None:
        where.append("role = ?")
        args.append(role)
    if phase is not None:
        where.append("phase = ?")
        args.append(phase)
    if task is not None:
        where.append(
            "(id IN (SELECT call_id FROM attempts WHERE task_id = ? AND call_id IS NOT NULL)"
            " OR instr('/' || unit || '/', '/' || ? || '/') > 0)"
        )
        args += [task, task]
    if attempt is not None:
        where.append("id = (SELECT call_id FROM attempts WHERE id = ?)")
        args.append(attempt)
    sql = "SELECT * FROM calls" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id DESC"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    return [CallRow.from_db(r) for r in reversed(store.query(sql, args))]


def call_row(store: RunStore, call_id: int) -> CallRow | None:
    """The ledger row with that id, if any."""
    row = store.query_one("SELECT * FROM calls WHERE id = ?", [call_id])
    return None if row is None else CallRow.from_db(row)


def conversation_of(store: RunStore, call: CallRow) -> Conversation:
    """A ledger row's exact messages and response, read from `texts`."""
    messages = None if call.request_blob is None else store.get_request(call.request_blob)
    response = None if call.response_blob is None else store.get_response(call.response_blob)
    return Conversation(call=call, messages=messages, response=response)


def conversation(store: RunStore, call_id: int) -> Conversation | None:
    """The call with that id and its texts, if there is such a call."""
    call = call_row(store, call_id)
    return None if call is None else conversation_of(store, call)


def attempt_call_id(store: RunStore, attempt_id: int) -> int | None:
    """The call id an attempt row links to: None when it carries none; KeyError when there is no such attempt."""
    row = store.query_one("SELECT call_id FROM attempts WHERE id = ?", [attempt_id])
    if row is None:
        raise KeyError(f"no attempt {attempt_id}")
    return None if row["call_id"] is None else int(row["call_id"])


def attempt_answer(store: RunStore, attempt_id: int) -> str | None:
    """An attempt row's answer (an episode's outcome and trace); KeyError when there is no such attempt."""
    row = store.query_one("SELECT answer FROM attempts WHERE id = ?", [attempt_id])
    if row is None:
        raise KeyError(f"no attempt {attempt_id}")
    return None if row["answer"] is None else str(row["answer"])


def attempt_conversation(store: RunStore, attempt_id: int) -> Conversation | None:
    """The conversation that produced an attempt row's answer: None when the attempt links to no call; KeyError
    when there is no such attempt."""
    call_id = attempt_call_id(store, attempt_id)
    return None if call_id is None else conversation(store, call_id)


def last_call_id(store: RunStore) -> int:
    """The id of the newest ledger row (0 for an empty ledger): a mark to find the calls a unit makes."""
    row = store.query_one("SELECT COALESCE(MAX(id), 0) AS n FROM calls")
    return int(row["n"]) if row else 0


INTERRUPTED = "interrupted: the run ended during this call (it may have reached the provider)"
"""The error of a ledger row written before its call and never completed (a kill, or a call still in flight)."""


def pending_calls(store: RunStore, cell: str) -> int:
    """`cell`'s ledger rows still marked `INTERRUPTED`: in a live run, its calls in flight."""
    row = store.query_one("SELECT COUNT(*) AS n FROM calls WHERE cell=? AND error=?", [cell, INTERRUPTED])
    return int(row["n"]) if row else 0


def pending_by_role(store: RunStore) -> dict[str, int]:
    """Ledger rows still marked `INTERRUPTED`, per role: calls in flight while the run runs (or cut off by a kill)."""
    rows = store.query("SELECT role, COUNT(*) AS n FROM calls WHERE error=? GROUP BY role", [INTERRUPTED])
    return {str(r["role"]): int(r["n"]) for r in rows}


def errors_since(store: RunStore, cell: str, since: int, shared_phases: Sequence[str] = (),
                 unit: str | None = None) -> list[str]:
    """Provider errors recorded after ledger row `since`, oldest first: `cell`'s own (of its `unit` only, when given:
    a cell's episodes run side by side), and those of calls that belong to no cell in one of `shared_phases` (the
    benchmark's judge, which grades for every cell). A row still pending (`INTERRUPTED`: another cell's judge call in
    flight) is no provider error."""
    marks = ",".join("?" * len(shared_phases)) or "NULL"
    own = "cell=?" if unit is None else "(cell=? AND unit=?)"
    rows = store.query(
        "SELECT error FROM calls WHERE id>? AND error IS NOT NULL AND error != ?"
        f" AND ({own} OR (cell IS NULL AND phase IN ({marks}))) ORDER BY id",
        [since, INTERRUPTED, cell, *([] if unit is None else [unit]), *shared_phases],
    )
    return [str(r["error"]) for r in rows]


@dataclass(frozen=True)
class RoleTotals:
    """Ledger totals of one role: calls, cached calls, errors, tokens and cost."""

    role: str
    calls: int
    cached_calls: int
    errors: int
    input_tokens: int
    output_tokens: int
    cost_usd: float


def totals_by_role(store: RunStore) -> list[RoleTotals]:
    """Per role, over the whole ledger (cached calls counted and shown)."""
    rows = store.query(
        "SELECT role, COUNT(*) AS calls, SUM(cached) AS cached_calls, SUM(error IS NOT NULL) AS errors,"
        " SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, SUM(cost_usd) AS cost_usd"
        " FROM calls GROUP BY role ORDER BY role"
    )
    return [RoleTotals(str(r["role"]), int(r["calls"]), int(r["cached_calls"] or 0), int(r["errors"] or 0),
                       int(r["input_tokens"] or 0), int(r["output_tokens"] or 0), float(r["cost_usd"] or 0.0))
            for r in rows]
