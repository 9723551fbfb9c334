"""The task text the solver sees: instruction, a preview of every sheet of the first case (as SpreadsheetBench
shows the first rows), instruction type, target range and the required program form."""

from __future__ import annotations

import datetime
from typing import Any

from evoarena.benchmarks.prompts import prompt_template
from evoarena.benchmarks.sheets.core import Sheets, SheetTask, col_letter

MAX_COLS = 14
MAX_WIDTH = 28


def show_value(value: Any) -> str:
    """A cell for the preview: text is quoted when it could be mistaken (stray spaces, looks like a number)."""
    if value is None:
        return ""
    if isinstance(value, datetime.datetime):
        return value.date().isoformat() if value.time() == datetime.time() else value.isoformat(sep=" ")
    if isinstance(value, float):
        return f"{value:g}" if abs(value) < 1e15 else repr(value)
    if isinstance(value, str):
        text = value.replace("\n", " ")
        try:
            float(text)
            numeric = True
        except ValueError:
            numeric = False
        if numeric or text != text.strip() or "  " in text or not text:
            text = f'"{text}"'
        return text if len(text) <= MAX_WIDTH else text[: MAX_WIDTH - 1] + "…"
    return str(value)


def preview_table(grid: list[list[Any]], rows: int) -> tuple[str, str, bool, int]:
    """(the table, its size in words, whether rows were left out, how many rows are shown)."""
    n_rows = len(grid)
    n_cols = max((i + 1 for line in grid for i, v in enumerate(line) if v is not None), default=0)
    if n_rows == 0 or n_cols == 0:
        return "(empty)", "empty", False, 0
    shown = grid[:rows]
    cols = min(n_cols, MAX_COLS)
    cells = [["", *(col_letter(c + 1) for c in range(cols))]]
    for r, line in enumerate(shown, start=1):
        cells.append([str(r), *(show_value(line[c]) if c < len(line) else "" for c in range(cols))])
    widths = [max(len(row[i]) for row in cells) for i in range(cols + 1)]
    text = "\n".join(" | ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in cells)
    size = f"rows 1-{n_rows}, columns A-{col_letter(n_cols)}"
    if n_cols > cols:
        size += f"; only columns A-{col_letter(cols)} shown"
    return text, size, n_rows > rows, len(shown)


def task_text(task: SheetTask, first_case: Sheets, preview_rows: int) -> str:
    sheets = []
    for name, grid in first_case.items():
        table, size, more, shown = preview_table(grid, preview_rows)
        sheets.append({"name": name, "table": table, "size": size, "more": more, "shown": shown})
    return prompt_template("evoarena.benchmarks.sheets", "task.md").render(
        instruction=task.instruction.strip(),
        sheets=sheets,
        n_cases=len(task.cases),
        instruction_type=task.instruction_type,
        target=task.target,
    )
