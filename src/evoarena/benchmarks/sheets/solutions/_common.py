"""Helpers every reference program inlines: the task's parameters, the target range, header lookup, and
reading numbers and keys the way a careful spreadsheet user would."""

import re

PARAMS: dict[str, str] = {}  # render: drop
TARGET = ""  # render: drop


def target_range() -> tuple[str, int, int, int, int]:
    """TARGET as (sheet, first column, first row, last column, last row), columns 1-based."""
    sheet, _, cells = TARGET.rpartition("!")
    if len(sheet) > 1 and sheet[0] == sheet[-1] == "'":
        sheet = sheet[1:-1].replace("''", "'")
    first, _, last = cells.partition(":")
    bounds = []
    for ref in (first, last or first):
        m = re.fullmatch(r"([A-Z]+)(\d+)", ref)
        if m is None:
            raise ValueError(f"bad cell {ref!r} in {TARGET!r}")
        col = 0
        for ch in m.group(1):
            col = col * 26 + ord(ch) - 64
        bounds.append((col, int(m.group(2))))
    return sheet, bounds[0][0], bounds[0][1], bounds[1][0], bounds[1][1]


def find_header(ws, names):
    """The header row holding every name in `names` and a map name → column (both 1-based)."""
    for row in ws.iter_rows(min_row=1, max_row=min(ws.max_row, 30)):
        found: dict[str, int] = {}
        for cell in row:
            if isinstance(cell.value, str) and cell.value.strip() in names:
                found.setdefault(cell.value.strip(), cell.column)
        if all(n in found for n in names):
            return row[0].row, found
    raise ValueError(f"no header row with {sorted(names)} in sheet {ws.title!r}")


def blank(value):
    return value is None or (isinstance(value, str) and not value.strip())


def number(value):
    """A number from a number cell or from numeric text like ' 1,250.50 '; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return float(value.strip().replace(",", ""))
        except ValueError:
            return None
    return None


def key(value):
    """A comparable key: 1043 and '1043 ' are the same key; text is trimmed."""
    n = number(value)
    if n is not None:
        return str(int(n)) if float(n).is_integer() else str(n)
    return "" if value is None else str(value).strip()
