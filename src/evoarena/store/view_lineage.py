"""Read-only queries of the viewer's lineage pages: per version its score means by phase (aggregated in SQL, so a
cell with 10k graded test attempts returns a handful of rows), the scores clade means and parent policies pool, the
number of versions per cell, and a page of a cell's search / lineage events."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from evoarena.store.db import RunStore
from evoarena.store.queries import EventRow
from evoarena.store.view_trace import CallBrief


@dataclass(frozen=True)
class PhaseMean:
    """The graded attempts of one version in one phase: their mean score and how many."""

    mean: float
    n: int


def version_means(store: RunStore, cell: str, version_id: str | None = None) -> dict[str, dict[str, PhaseMean]]:
    """{version: {phase: mean and count}} of a cell's graded attempts (one version's with `version_id`)."""
    sql = ("SELECT version_id, phase, AVG(score) AS mean, COUNT(*) AS n FROM attempts"
           " WHERE cell=? AND score IS NOT NULL")
    params: list[str] = [cell]
    if version_id is not None:
        sql += " AND version_id=?"
        params.append(version_id)
    out: dict[str, dict[str, PhaseMean]] = {}
    for r in store.query(sql + " GROUP BY version_id, phase", params):
        out.setdefault(str(r["version_id"]), {})[str(r["phase"])] = PhaseMean(float(r["mean"]), int(r["n"]))
    return out


def version_counts(store: RunStore) -> dict[str, int]:
    """{cell: number of versions} of every cell that has one."""
    return {str(r["cell"]): int(r["n"])
            for r in store.query("SELECT cell, COUNT(*) AS n FROM harness_versions GROUP BY cell")}


def cell_events(store: RunStore, cell: str, kinds: Sequence[str], limit: int, offset: int = 0
                ) -> tuple[list[EventRow], int]:
    """(a page of a cell's events of `kinds` in the order they happened, how many there are in all)."""
    if not kinds:
        return [], 0
    marks = ", ".join("?" for _ in kinds)
    where = f"FROM events WHERE cell=? AND kind IN ({marks})"
    total = store.query_one(f"SELECT COUNT(*) AS n {where}", [cell, *kinds])
    rows = store.query(f"SELECT id, cell, kind, payload, unit {where} ORDER BY id LIMIT ? OFFSET ?",
                       [cell, *kinds, limit, offset])
    events = [EventRow(id=int(r["id"]), cell=r["cell"], kind=str(r["kind"]), payload=json.loads(str(r["payload"])),
                       unit=r["unit"]) for r in rows]
    return events, int(total["n"]) if total else 0


def update_calls(store: RunStore, cell: str) -> dict[str, list[CallBrief]]:
    """{unit: the calls of roles other than the solver a cell made in it}, oldest first: the proposer, reflector,
    curator… calls of a practice step, whose replies the versions recorded at that step (`harness_versions.step` is
    the unit's key) were made from."""
    rows = store.query("SELECT id, role, phase, input_tokens, output_tokens, cached, error, unit FROM calls"
                       " WHERE cell = ? AND role != 'solver' AND unit IS NOT NULL ORDER BY id", [cell])
    out: dict[str, list[CallBrief]] = {}
    for r in rows:
        out.setdefault(str(r["unit"]), []).append(CallBrief(int(r["id"]), str(r["role"]), r["phase"],
                                                            int(r["input_tokens"]), int(r["output_tokens"]),
                                                            bool(r["cached"]), r["error"]))
    return out


def unit_versions(store: RunStore, cell: str, unit: str) -> list[str]:
    """The versions a cell recorded at one unit (a practice step), in the order they were made."""
    rows = store.query("SELECT id FROM harness_versions WHERE cell = ? AND step = ? ORDER BY created_at, rowid",
                       [cell, unit])
    return [str(r["id"]) for r in rows]
