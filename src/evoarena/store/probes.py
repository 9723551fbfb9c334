"""The `probes` table: each role probe's verdict, kept so a resumed run (or a second `probe-roles`) reuses it."""

from __future__ import annotations

import json
from dataclasses import dataclass

from evoarena.store.db import RunStore, now_iso


@dataclass(frozen=True)
class ProbeRow:
    """One probe call judged: which method's probe, for which role and model, and the verdict."""

    key: str
    method: str
    role: str
    model: str
    probe: str
    conditions: tuple[str, ...]
    well_formed: bool
    usable: bool
    reason: str
    tokens: int
    call_id: int | None
    error: str | None


def _row(r: dict[str, object]) -> ProbeRow:
    return ProbeRow(
        key=str(r["key"]), method=str(r["method"]), role=str(r["role"]), model=str(r["model"]),
        probe=str(r["probe"]), conditions=tuple(json.loads(str(r["conditions"]))),
        well_formed=bool(r["well_formed"]), usable=bool(r["usable"]), reason=str(r["reason"]),
        tokens=int(str(r["tokens"])), call_id=None if r["call_id"] is None else int(str(r["call_id"])),
        error=None if r["error"] is None else str(r["error"]),
    )


def probe_row(store: RunStore, key: str) -> ProbeRow | None:
    r = store.query_one("SELECT * FROM probes WHERE key=?", (key,))
    return None if r is None else _row(r)


def probe_rows(store: RunStore) -> list[ProbeRow]:
    """Every stored probe, by method, role, model and probe name."""
    return [_row(r) for r in store.query("SELECT * FROM probes ORDER BY method, role, model, probe, key")]


def record_probe(store: RunStore, row: ProbeRow) -> None:
    """Insert or replace a probe's verdict (a re-judged or re-mapped probe keeps one row per key)."""
    store.execute(
        "INSERT OR REPLACE INTO probes (key, method, role, model, probe, conditions, well_formed, usable, reason,"
        " tokens, call_id, error, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (row.key, row.method, row.role, row.model, row.probe, json.dumps(list(row.conditions)), int(row.well_formed),
         int(row.usable), row.reason, row.tokens, row.call_id, row.error, now_iso()),
    )
