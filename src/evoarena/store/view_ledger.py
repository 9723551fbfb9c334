"""The ledger page's SQL: the calls table filtered (cell, phase, role, cached, error) in a WHERE, paged by keyset on
the row id (newest first: a page is an index range of the primary key, however long the ledger), with the totals
of every matching row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from evoarena.store.calls import CallRow
from evoarena.store.db import RunStore

NO_CELL = "~none"  # the cell filter's value for calls that belong to no cell (a shared judge)
YesNo = Literal["", "yes", "no"]


@dataclass(frozen=True)
class LedgerFilter:
    """What the ledger shows: "" for any value; `cell` NO_CELL for the calls of no cell."""

    cell: str = ""
    phase: str = ""
    role: str = ""
    cached: YesNo = ""
    error: YesNo = ""

    def where(self) -> tuple[str, list[Any]]:
        """The SQL condition (" WHERE …" or "") and its parameters."""
        parts: list[str] = []
        args: list[Any] = []
        if self.cell == NO_CELL:
            parts.append("cell IS NULL")
        elif self.cell:
            parts.append("cell = ?")
            args.append(self.cell)
        if self.role:
            parts.append("role = ?")
            args.append(self.role)
        if self.phase:
            parts.append("phase = ?")
            args.append(self.phase)
        if self.cached:
            parts.append("cached = ?")
            args.append(1 if self.cached == "yes" else 0)
        if self.error:
            parts.append("error IS NOT NULL" if self.error == "yes" else "error IS NULL")
        return (" WHERE " + " AND ".join(parts) if parts else ""), args

    def params(self) -> dict[str, str]:
        """The filter as query parameters (the ones set)."""
        return {k: v for k, v in (("cell", self.cell), ("phase", self.phase), ("role", self.role),
                                  ("cached", self.cached), ("error", self.error)) if v}


@dataclass(frozen=True)
class LedgerTotals:
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    errors: int
    cached: int


@dataclass(frozen=True)
class LedgerPage:
    """Calls newest first; `older`/`newer`: the keys of the next pages (None at an end)."""

    rows: list[CallRow]
    older: int | None  # show ids below this
    newer: int | None  # show ids above this


def totals(store: RunStore, f: LedgerFilter) -> LedgerTotals:
    where, args = f.where()
    r = store.query_one("SELECT COUNT(*) AS n, SUM(input_tokens) AS i, SUM(output_tokens) AS o, SUM(cost_usd) AS c,"
                        f" SUM(error IS NOT NULL) AS e, SUM(cached) AS k FROM calls{where}", args) or {}
    return LedgerTotals(int(r.get("n") or 0), int(r.get("i") or 0), int(r.get("o") or 0), float(r.get("c") or 0.0),
                        int(r.get("e") or 0), int(r.get("k") or 0))


def _and(where: str, cond: str) -> str:
    return f"{where} AND {cond}" if where else f" WHERE {cond}"


def page(store: RunStore, f: LedgerFilter, *, before: int | None = None, after: int | None = None,
         size: int = 100) -> LedgerPage:
    """The `size` matching calls just below id `before` (the newest ones when neither key is given), or just above
    id `after`; newest first either way."""
    where, args = f.where()
    if after is not None:
        rows = store.query(f"SELECT * FROM calls{_and(where, 'id > ?')} ORDER BY id ASC LIMIT ?",
                           [*args, after, size + 1])
        more_newer = len(rows) > size
        rows = list(reversed(rows[:size]))
        more_older = True
    else:
        cond = _and(where, "id < ?") if before is not None else where
        rows = store.query(f"SELECT * FROM calls{cond} ORDER BY id DESC LIMIT ?",
                           [*args, *([before] if before is not None else []), size + 1])
        more_older = len(rows) > size
        rows = rows[:size]
        more_newer = before is not None
    calls = [CallRow.from_db(r) for r in rows]
    if calls and more_older:  # is there really an older matching row? (after a jump from `after`)
        more_older = store.query_one(f"SELECT 1 AS x FROM calls{_and(where, 'id < ?')} LIMIT 1",
                                     [*args, calls[-1].id]) is not None
    if calls and more_newer and after is None:
        more_newer = store.query_one(f"SELECT 1 AS x FROM calls{_and(where, 'id > ?')} LIMIT 1",
                                     [*args, calls[0].id]) is not None
    return LedgerPage(calls, calls[-1].id if calls and more_older else None,
                      calls[0].id if calls and more_newer else None)


@dataclass(frozen=True)
class LedgerChoices:
    """The values each filter offers: the cells (from `cells`, plus NO_CELL when some call has no cell), and the
    phases and roles in the ledger."""

    cells: list[str]
    phases: list[str]
    roles: list[str]


def choices(store: RunStore) -> LedgerChoices:
    cells = [str(r["cell"]) for r in store.query("SELECT cell FROM cells ORDER BY cell")]
    if store.query_one("SELECT 1 AS x FROM calls WHERE cell IS NULL LIMIT 1"):
        cells.append(NO_CELL)
    combos = store.query("SELECT DISTINCT phase, role FROM calls")
    return LedgerChoices(cells, sorted({str(r["phase"]) for r in combos if r["phase"] is not None}),
                         sorted({str(r["role"]) for r in combos}))
