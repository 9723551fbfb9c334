"""Value types of the sheets benchmark: grids, test cases, tasks, and A1-style cell ranges."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

Grid = list[list[Any]]
"""One sheet as rows of cell values (row 0 is spreadsheet row 1; None is an empty cell)."""

Sheets = dict[str, Grid]
"""A workbook as sheet name → grid, in sheet order."""

CELL_LEVEL = "Cell-Level Manipulation"
SHEET_LEVEL = "Sheet-Level Manipulation"

_CELL = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)$")


@dataclass(frozen=True)
class Case:
    """One test case: an input workbook and the expected value of every target cell (`Sheet!A1` → value).
    `input_sheets` is set for generated cases (the workbook is built from it); `input_xlsx` for loaded ones."""

    expected: dict[str, Any]
    input_sheets: Sheets | None = None
    input_xlsx: bytes | None = None
    expected_styles: dict[str, tuple[str, str, str]] | None = None  # loaded answers: fill fg/bg, font rgb


@dataclass(frozen=True)
class SheetTask:
    """A spreadsheet task: one instruction and target range, three cases (same layout, different data)."""

    id: str
    family: str
    instruction: str
    target: str
    cases: tuple[Case, ...]
    instruction_type: str = CELL_LEVEL
    reference_program: str = ""
    params: dict[str, str] = field(default_factory=dict)
    source_id: str = ""  # generated: the index within its split; loaded: SpreadsheetBench's item id


def col_letter(n: int) -> str:
    """1 → A, 27 → AA."""
    out = ""
    while n > 0:
        n, rem = divmod(n - 1, 26)
        out = chr(65 + rem) + out
    return out


def col_number(letters: str) -> int:
    """A → 1, AA → 27."""
    n = 0
    for ch in letters.upper():
        n = n * 26 + ord(ch) - 64
    return n


def split_cell(ref: str) -> tuple[int, int]:
    """'D12' → (column 4, row 12)."""
    m = _CELL.match(ref.strip())
    if m is None:
        raise ValueError(f"not a cell reference: {ref!r}")
    return col_number(m.group(1)), int(m.group(2))


def split_sheet(part: str, default_sheet: str) -> tuple[str, str]:
    """"'My Sheet'!A1:B2" → ("My Sheet", "A1:B2"); a part without a sheet uses `default_sheet`."""
    if "!" not in part:
        return default_sheet, part.strip()
    sheet, _, rng = part.rpartition("!")
    sheet = sheet.strip()
    if len(sheet) >= 2 and sheet[0] == sheet[-1] == "'":
        sheet = sheet[1:-1].replace("''", "'")
    return sheet, rng.strip().strip("'")


def target_cells(target: str, default_sheet: str = "") -> list[tuple[str, str]]:
    """Every (sheet, cell) of a target like `Sheet1!D2:D20` or `'A b'!A1,B3:C4` (comma-separated parts, as
    SpreadsheetBench's answer_position), row by row within each part."""
    out: list[tuple[str, str]] = []
    for part in target.split(","):
        if not part.strip():
            continue
        sheet, rng = split_sheet(part, default_sheet)
        first, _, last = rng.partition(":")
        c1, r1 = split_cell(first)
        c2, r2 = split_cell(last) if last else (c1, r1)
        for r in range(min(r1, r2), max(r1, r2) + 1):
            for c in range(min(c1, c2), max(c1, c2) + 1):
                out.append((sheet, f"{col_letter(c)}{r}"))
    return out


def quote_sheet(name: str) -> str:
    """A sheet name as it appears in a range: quoted when it holds anything but letters, digits and `_`."""
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else "'" + name.replace("'", "''") + "'"


def cell_key(sheet: str, cell: str) -> str:
    return f"{quote_sheet(sheet)}!{cell}"
