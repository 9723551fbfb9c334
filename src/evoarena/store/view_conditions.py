"""Read-only queries of the viewer's conditions page: the store's write mark (what a cached result is keyed by) and
each cell's attempts per phase so far (the progress of a run that is still writing)."""

from __future__ import annotations

from dataclasses import dataclass

from evoarena.store.db import RunStore


@dataclass(frozen=True)
class StoreMark:
    """How far a store has been written: the last attempt and call ids and the cells' statuses. Equal marks mean the
    report's inputs (scores of done cells, ledger rows, budgets) are the same."""

    max_attempt: int
    max_call: int
    cells: tuple[tuple[str, str, bool], ...]  # (cell, status, has a budget)


def store_mark(store: RunStore) -> StoreMark:
    a = store.query_one("SELECT MAX(id) AS n FROM attempts") or {}
    c = store.query_one("SELECT MAX(id) AS n FROM calls") or {}
    cells = store.query("SELECT cell, status, budget_json IS NOT NULL AS b FROM cells ORDER BY cell")
    return StoreMark(int(a.get("n") or 0), int(c.get("n") or 0),
                     tuple((str(r["cell"]), str(r["status"]), bool(r["b"])) for r in cells))


@dataclass(frozen=True)
class PhaseCount:
    """A cell's attempts of one phase: how many, how many graded, their mean score."""

    cell: str
    phase: str
    attempts: int
    graded: int
    mean: float | None


def phase_counts(store: RunStore) -> list[PhaseCount]:
    """Per cell and phase, its attempts so far (one GROUP BY over the (cell, phase) index)."""
    rows = store.query(
        "SELECT cell, phase, COUNT(*) AS n, SUM(score IS NOT NULL AND error IS NULL) AS g,"
        " AVG(CASE WHEN error IS NULL THEN score END) AS m FROM attempts GROUP BY cell, phase ORDER BY cell, phase")
    return [PhaseCount(str(r["cell"]), str(r["phase"]), int(r["n"]), int(r["g"] or 0),
                       None if r["m"] is None else float(r["m"])) for r in rows]
