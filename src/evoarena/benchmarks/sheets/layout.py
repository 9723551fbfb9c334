"""Placing tables on sheets with seeded variation (start column, title rows, distractor columns, blank rows),
and writing a workbook of grids to .xlsx bytes with openpyxl."""

from __future__ import annotations

import io
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evoarena.benchmarks.sheets.core import Grid, Sheets, col_letter

FIRST = ["Ana", "Ben", "Carla", "David", "Elif", "Femi", "Grace", "Hugo", "Ines", "Jonas", "Kenji", "Lena", "Marta",
         "Nikhil", "Olga", "Pedro", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wen", "Yusuf", "Zoe"]  # fmt: skip
LAST = ["Silva", "Becker", "Okafor", "Novak", "Tanaka", "Garcia", "Kowalski", "Haddad", "Larsen", "Moreau", "Rossi",
        "Schmidt", "Nguyen", "Murphy", "Costa", "Ivanova", "Jensen", "Patel", "Weber", "Dubois"]  # fmt: skip
TITLES = ["Monthly export", "Data as of last close", "Q3 working file", "Do not sort - linked report", "Raw extract",
          "Prepared by finance", "Updated weekly"]  # fmt: skip


def _note(r: random.Random) -> Any:
    return r.choice([None, None, "ok", "check", "see email", "follow up", "n/a", "urgent"])


DISTRACTORS: dict[str, Callable[[random.Random], Any]] = {
    "Notes": _note,
    "Owner": lambda r: f"{r.choice(FIRST)} {r.choice(LAST)}",
    "Ref #": lambda r: r.randint(10000, 99999),
    "Priority": lambda r: r.choice(["High", "Medium", "Low"]),
    "Channel": lambda r: r.choice(["Online", "Store", "Phone", "Partner"]),
    "Comment": lambda r: r.choice([None, "", "ok", "late", "returned", "double-check"]),
    "Batch": lambda r: f"B{r.randint(1, 40):02d}",
    "Approved": lambda r: r.choice(["Y", "N"]),
}


@dataclass(frozen=True)
class Placed:
    """Where a table landed: `cols` maps header → 1-based column, `rows` lists the 1-based row of each record
    (blank separator rows are not records), `last_row` is the last row of the table block."""

    header_row: int
    cols: dict[str, int]
    rows: list[int]
    last_row: int

    def letter(self, header: str) -> str:
        return col_letter(self.cols[header])


@dataclass(frozen=True)
class TableLayout:
    """A table layout fixed for all cases of a task: column order (with distractors), start column, title rows
    above the header, and the number of blank rows scattered in the data."""

    order: tuple[str, ...]
    start_col: int
    title: str | None
    title_gap: int
    blanks: int

    @staticmethod
    def draw(
        r: random.Random, headers: Sequence[str], *, distractors: int = 2, blanks: int = 0, fixed_order: bool = False,
        start: bool = True, title: bool = True,
    ) -> TableLayout:
        """`headers` are the columns the task needs, in their natural order unless shuffled; `distractors` extra
        columns are mixed in at random positions."""
        pool = [h for h in DISTRACTORS if h not in headers]
        extra = r.sample(pool, k=min(distractors, len(pool)))
        order = list(headers)
        if not fixed_order:
            r.shuffle(order)
        for h in extra:
            order.insert(r.randint(0, len(order)), h)
        has_title = title and r.random() < 0.5
        return TableLayout(
            order=tuple(order),
            start_col=r.choice([1, 1, 1, 2, 3]) if start else 1,
            title=r.choice(TITLES) if has_title else None,
            title_gap=r.choice([0, 1]) if has_title else 0,
            blanks=blanks,
        )

    @property
    def header_row(self) -> int:
        return 1 if self.title is None else 2 + self.title_gap

    def letter(self, header: str) -> str:
        return col_letter(self.start_col + self.order.index(header))

    def first_row(self) -> int:
        return self.header_row + 1

    def last_row(self, n_records: int) -> int:
        return self.header_row + n_records + self.blanks

    def render(
        self,
        r: random.Random,
        columns: dict[str, list[Any]],
        grid: Grid | None = None,
        empty: frozenset[int] = frozenset(),
    ) -> tuple[Grid, Placed]:
        """Lay `columns` (header → one value per record) onto `grid` (a new one by default); distractor values
        are drawn from `r`, and so are the positions of the blank rows. Records in `empty` get no distractors (the
        caller's own separator rows)."""
        n = len(next(iter(columns.values())))
        grid = [] if grid is None else grid
        cols = {h: self.start_col + i for i, h in enumerate(self.order)}
        if self.title is not None:
            put(grid, 1, self.start_col, self.title)
        for h, c in cols.items():
            put(grid, self.header_row, c, h)
        if n <= self.blanks:
            raise ValueError(f"a table of {n} records cannot hold {self.blanks} blank rows")
        gaps = set(r.sample(range(1, n), k=self.blanks))
        rows: list[int] = []
        row = self.header_row
        for i in range(n):
            row += 1 + (1 if i in gaps else 0)
            rows.append(row)
            for h, c in cols.items():
                value = columns[h][i] if h in columns else None if i in empty else DISTRACTORS[h](r)
                put(grid, row, c, value)
        return grid, Placed(self.header_row, cols, rows, self.last_row(n))


def put(grid: Grid, row: int, col: int, value: Any) -> None:
    """Set a 1-based cell, growing the grid as needed."""
    while len(grid) < row:
        grid.append([])
    line = grid[row - 1]
    while len(line) < col:
        line.append(None)
    line[col - 1] = value


def workbook_bytes(sheets: Sheets) -> bytes:
    """The .xlsx file of a workbook given as grids (strings, numbers, dates and datetimes)."""
    from openpyxl import Workbook

    wb = Workbook()
    default = wb.active
    for name, grid in sheets.items():
        ws = wb.create_sheet(name)
        for r, line in enumerate(grid, start=1):
            for c, value in enumerate(line, start=1):
                if value is not None:
                    ws.cell(row=r, column=c, value=value)
    if default is not None:
        wb.remove(default)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def read_sheets(xlsx: bytes, *, max_rows: int | None = None) -> Sheets:
    """A workbook's cached values as grids (for previews of loaded files), at most `max_rows` rows per sheet."""
    from openpyxl import load_workbook

    wb = load_workbook(io.BytesIO(xlsx), data_only=True, read_only=True)
    out: Sheets = {}
    for ws in wb.worksheets:
        grid: Grid = []
        for i, row in enumerate(ws.iter_rows(values_only=True)):
            if max_rows is not None and i >= max_rows:
                break
            grid.append(list(row))
        out[ws.title] = grid
    wb.close()
    return out
