"""Moving a cell's rows between two run stores: what a remote worker needs to resume a cell (`seed_rows`), what it
sends back as its work lands (`unit_rows`, `call_rows`, `loose_rows`), and the driver's import of them (`absorb`).

A worker runs its cell against a private store; the driver's store stays the only record of the run. Ledger rows
are renumbered on import (the worker's ids are its own): `CallIds` maps a worker's call ids to the driver's, so a
row written ahead of its call and completed later is one row, and attempts point at the right call.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evoarena.store.db import RunStore

_CALL_BLOBS = ("request_blob", "response_blob")


@dataclass
class Rows:
    """Rows of one cell, as plain dicts (picklable, so they can cross a process or a network)."""

    cells: list[dict[str, Any]] = field(default_factory=list)
    units: list[dict[str, Any]] = field(default_factory=list)
    versions: list[dict[str, Any]] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)  # `call_id` is the sender's
    calls: list[dict[str, Any]] = field(default_factory=list)  # `id` is the sender's
    events: list[dict[str, Any]] = field(default_factory=list)
    texts: list[dict[str, Any]] = field(default_factory=list)
    blobs: dict[str, bytes] = field(default_factory=dict)

    def __len__(self) -> int:
        return sum(len(rows) for rows in (self.cells, self.units, self.versions, self.attempts, self.calls,
                                          self.events, self.texts, self.blobs))


class CallIds:
    """A sender's ledger ids -> the receiving store's (one per sender: ids are only unique within a store)."""

    def __init__(self) -> None:
        self.ids: dict[int, int] = {}


def seed_rows(store: RunStore, cell: str) -> Rows:
    """What a cell needs to resume elsewhere: its cell row, finished units and harness versions (with their trees)."""
    versions = store.query("SELECT * FROM harness_versions WHERE cell=? ORDER BY rowid", [cell])
    return Rows(
        cells=store.query("SELECT * FROM cells WHERE cell=?", [cell]),
        units=store.query("SELECT * FROM units WHERE cell=? ORDER BY rowid", [cell]),
        versions=versions,
        blobs=_blobs(store, (v["tree_blob"] for v in versions)),
    )


def unit_rows(store: RunStore, cell: str, unit: str) -> Rows:
    """A finished unit: its result, attempts, ledger rows, events and the harness versions it made."""
    calls = store.query("SELECT * FROM calls WHERE cell=? AND unit=? ORDER BY id", [cell, unit])
    attempts = store.query("SELECT * FROM attempts WHERE cell=? AND unit_key=? ORDER BY id", [cell, unit])
    versions = store.query("SELECT * FROM harness_versions WHERE cell=? AND step=? ORDER BY rowid", [cell, unit])
    return Rows(
        units=store.query("SELECT * FROM units WHERE cell=? AND key=?", [cell, unit]),
        versions=versions,
        attempts=[_without(a, "id") for a in attempts],
        calls=calls,
        events=[_without(e, "id") for e in store.query(
            "SELECT * FROM events WHERE cell=? AND unit=? ORDER BY id", [cell, unit])],
        texts=_texts(store, calls),
        blobs=_blobs(store, [*(a["output_blob"] for a in attempts), *(v["tree_blob"] for v in versions)]),
    )


def call_rows(store: RunStore, call_ids: Sequence[int]) -> Rows:
    """Ledger rows as they stand now (a billed call's row goes out when written ahead and again when completed)."""
    marks = ", ".join("?" for _ in call_ids)
    calls = store.query(f"SELECT * FROM calls WHERE id IN ({marks}) ORDER BY id", list(call_ids))
    return Rows(calls=calls, texts=_texts(store, calls))


def loose_rows(store: RunStore, cell: str, *, after_event: int = 0) -> tuple[Rows, int]:
    """The cell's row and its events outside any unit after event id `after_event`; and the last such id."""
    events = store.query("SELECT * FROM events WHERE cell=? AND unit IS NULL AND id>? ORDER BY id",
                         [cell, after_event])
    last = max((int(e["id"]) for e in events), default=after_event)
    return Rows(cells=store.query("SELECT * FROM cells WHERE cell=?", [cell]),
                events=[_without(e, "id") for e in events]), last


def absorb(store: RunStore, rows: Rows, ids: CallIds) -> None:
    """Write `rows` into `store` in one transaction: blobs first (content-addressed, so a repeat is harmless), then
    texts, cells, versions, calls (renumbered through `ids`), attempts, events and units."""
    for digest, data in rows.blobs.items():
        if store.blobs.put(data) != digest:
            raise ValueError(f"blob {digest[:12]}: its content does not match its digest")
    with store.transaction() as conn:
        conn.executemany("INSERT OR IGNORE INTO texts (digest, size, body) VALUES (?, ?, ?)",
                         [(t["digest"], t["size"], t["body"]) for t in rows.texts])
        for row in rows.cells:
            _insert(conn, "INSERT OR REPLACE", "cells", row)
        for row in rows.versions:
            _insert(conn, "INSERT OR IGNORE", "harness_versions", row)
        for row in rows.calls:
            _put_call(store, conn, row, ids)
        for row in rows.attempts:
            theirs = row.get("call_id")
            _insert(conn, "INSERT", "attempts", {**row, "call_id": None if theirs is None else ids.ids.get(theirs)})
        for row in rows.events:
            _insert(conn, "INSERT", "events", row)
        for row in rows.units:
            _insert(conn, "INSERT OR REPLACE", "units", row)


def drop_call(store: RunStore, their_id: int, ids: CallIds) -> None:
    """The sender dropped a row written ahead of a call that was never made: drop ours too."""
    ours = ids.ids.pop(their_id, None)
    if ours is not None:
        store.drop_call(ours)


def _put_call(store: RunStore, conn: sqlite3.Connection, row: dict[str, Any], ids: CallIds) -> None:
    theirs = int(row["id"])
    ours = ids.ids.get(theirs)
    if ours is None:
        ours = ids.ids[theirs] = store.new_call_id(conn)
        _insert(conn, "INSERT", "calls", {**row, "id": ours})
    else:
        values = {k: v for k, v in row.items() if k != "id"}
        conn.execute(f"UPDATE calls SET {', '.join(f'{k}=?' for k in values)} WHERE id=?", [*values.values(), ours])


def _insert(conn: sqlite3.Connection, verb: str, table: str, row: dict[str, Any]) -> None:
    conn.execute(f"{verb} INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
                 list(row.values()))


def _without(row: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != key}


def _texts(store: RunStore, calls: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stored texts a set of ledger rows refers to: each request's messages and each response."""
    request = [c["request_blob"] for c in calls if c.get("request_blob")]
    digests = {c[k] for c in calls for k in _CALL_BLOBS if c.get(k)}
    for digest in request:  # a request lists [role, message digest(, extra)]: the messages are texts of their own
        digests.update(m[1] for m in json.loads(store.get_text(digest)))
    if not digests:
        return []
    marks = ", ".join("?" for _ in digests)
    return store.query(f"SELECT digest, size, body FROM texts WHERE digest IN ({marks})", sorted(digests))


def _blobs(store: RunStore, digests: Iterable[str | None]) -> dict[str, bytes]:
    return {d: store.blobs.get(d) for d in dict.fromkeys(d for d in digests if d)}
