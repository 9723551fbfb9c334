"""Named queries on the harness_versions and cells tables: what `harness/` needs to keep and find versions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evoarena.store.db import RunStore, now_iso


@dataclass(frozen=True)
class VersionRow:
    """One harness version of a cell: its parents, the method that made it, its manifest and the step."""

    id: str
    parent_ids: list[str]
    method: str
    manifest: dict[str, Any]
    step: str
    created_at: str


def insert_version(store: RunStore, *, version_id: str, cell: str, parents: Sequence[str], method: str,
                   manifest_json: str, tree_blob: str, step: str) -> None:
    """Record a version of `cell`; the same id twice in a cell keeps the first record."""
    store.execute(
        "INSERT OR IGNORE INTO harness_versions (id, cell, parent_ids, method, manifest, tree_blob, step,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [version_id, cell, json.dumps(list(parents)), method, manifest_json, tree_blob, step, now_iso()],
    )


def version_ids(store: RunStore, prefix: str) -> list[str]:
    """Distinct version ids starting with `prefix`."""
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    rows = store.query("SELECT DISTINCT id FROM harness_versions WHERE id LIKE ? ESCAPE '\\'", [escaped + "%"])
    return [str(r["id"]) for r in rows]


def tree_blob(store: RunStore, version_id: str) -> str | None:
    """The blob digest of a version's tree, or None when the run has no such version."""
    row = store.query_one("SELECT tree_blob FROM harness_versions WHERE id=? LIMIT 1", [version_id])
    return None if row is None else str(row["tree_blob"])


def cell_versions(store: RunStore, cell: str) -> list[VersionRow]:
    """A cell's versions in the order they were made."""
    rows = store.query(
        "SELECT id, parent_ids, method, manifest, step, created_at FROM harness_versions WHERE cell=?"
        " ORDER BY created_at, rowid",
        [cell],
    )
    return [VersionRow(str(r["id"]), json.loads(str(r["parent_ids"])), str(r["method"]),
                       json.loads(str(r["manifest"])), str(r["step"]), str(r["created_at"])) for r in rows]


def current_version(store: RunStore, cell: str) -> tuple[bool, str | None]:
    """(the cell exists, its working version)."""
    row = store.query_one("SELECT current_version FROM cells WHERE cell=?", [cell])
    return (False, None) if row is None else (True, row["current_version"])
