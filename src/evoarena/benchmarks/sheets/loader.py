"""Loading SpreadsheetBench's released layout instead of generating tasks (benchmark param `source`).

Layout (RUCKBReasoning/SpreadsheetBench, README and evaluation/evaluation.py): `<root>/dataset.json`, a list of
items with `id`, `instruction`, `spreadsheet_path` (a folder relative to the root, `spreadsheet/<id>`),
`instruction_type` and `answer_position` (comma-separated ranges, each optionally `Sheet!`-qualified, quotes
allowed; unqualified ranges refer to the answer workbook's first sheet). The folder holds test cases
`<n>_<id>_input.xlsx` / `<n>_<id>_answer.xlsx`, n = 1, 2, 3; SpreadsheetBench Verified names them
`<n>_<id>_init.xlsx` / `<n>_<id>_golden.xlsx`, which are accepted too. Expected values are the answer files'
cached values; fill and font colours are compared as SpreadsheetBench does."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evoarena.api import Split
from evoarena.benchmarks.sheets.core import CELL_LEVEL, Case, SheetTask, cell_key, split_sheet, target_cells
from evoarena.benchmarks.sheets.driver import style_of
from evoarena.benchmarks.sheets.generate import split_sizes

NAMES = (("input", "answer"), ("init", "golden"))
MAX_CASES = 10


class SourceError(ValueError):
    """A SpreadsheetBench folder that cannot be used; the message names the file."""


def read_items(root: Path) -> list[dict[str, Any]]:
    path = root / "dataset.json"
    if not path.is_file():
        raise SourceError(f"benchmark.params.source: no dataset.json in {root}")
    text = path.read_text("utf-8").strip()
    try:
        data = json.loads(text) if text.startswith("[") else [json.loads(ln) for ln in text.splitlines() if ln.strip()]
    except json.JSONDecodeError as err:
        raise SourceError(f"{path}: not JSON ({err})") from None
    if not isinstance(data, list):
        raise SourceError(f"{path}: expected a list of items")
    return data


def case_files(root: Path, item: dict[str, Any]) -> list[tuple[Path, Path]]:
    """(input, answer) per test case, in case order, for whichever naming the folder uses."""
    tid = str(item["id"])
    folder = root / str(item.get("spreadsheet_path") or f"spreadsheet/{tid}")
    if not folder.is_dir():
        folder = root / "spreadsheet" / tid
    out = []
    for n in range(1, MAX_CASES + 1):
        pair = next(((folder / f"{n}_{tid}_{a}.xlsx", folder / f"{n}_{tid}_{b}.xlsx") for a, b in NAMES
                     if (folder / f"{n}_{tid}_{a}.xlsx").is_file() and (folder / f"{n}_{tid}_{b}.xlsx").is_file()),
                    None)  # fmt: skip
        if pair is None:
            break
        out.append(pair)
    return out


def _bounded(position: str, max_rows: dict[str, int], default_sheet: str) -> str:
    """Whole-column parts like `A:C` become `A1:C<last row of that sheet>`."""
    parts = []
    for part in position.split(","):
        sheet, rng = split_sheet(part, default_sheet)
        if rng and not re.search(r"\d", rng):
            first, _, last = rng.partition(":")
            rng = f"{first}1:{last or first}{max(max_rows.get(sheet, 1), 1)}"
            part = f"'{sheet}'!{rng}"
        parts.append(part)
    return ",".join(parts)


def read_case(input_path: Path, answer_path: Path, position: str) -> tuple[Case, str]:
    """A case with the answer's values (and colours) at `position`, and the position resolved to cells."""
    from openpyxl import load_workbook

    answer = load_workbook(answer_path, data_only=True)
    default = answer.sheetnames[0]
    position = _bounded(position, {ws.title: ws.max_row for ws in answer.worksheets}, default)
    expected: dict[str, Any] = {}
    styles: dict[str, tuple[str, str, str]] = {}
    for sheet, cell in target_cells(position, default):
        key = cell_key(sheet, cell)
        if sheet in answer.sheetnames:
            c = answer[sheet][cell]
            expected[key] = c.value
            fg, bg, font = style_of(c)
            styles[key] = (fg, bg, font)
        else:
            expected[key] = None
    xlsx = input_path.read_bytes()
    return Case(expected, input_xlsx=xlsx, expected_styles=styles), position


def load_source(
    root: Path | str, *, seed: int, total: int | None, ratio: Sequence[int]
) -> list[tuple[Split, SheetTask]]:
    """The items of a SpreadsheetBench folder as tasks, shuffled by `seed`, at most `total`, split by `ratio`."""
    root = Path(root)
    items = [it for it in read_items(root) if case_files(root, it)]
    if not items:
        raise SourceError(f"benchmark.params.source: no item of {root / 'dataset.json'} has test-case files")
    random.Random(f"sheets-source:{seed}").shuffle(items)
    items = items[: total or len(items)]
    out: list[tuple[Split, SheetTask]] = []
    start = 0
    for split, size in split_sizes(len(items), ratio).items():
        out.extend((split, item_task(root, item)) for item in items[start : start + size])
        start += size
    return out


def item_task(root: Path, item: dict[str, Any]) -> SheetTask:
    cases = [read_case(i, a, str(item["answer_position"])) for i, a in case_files(root, item)]
    return SheetTask(
        id=f"sb-{item['id']}",
        family=f"spreadsheetbench:{item.get('instruction_type', '')}",
        instruction=str(item["instruction"]),
        target=str(item["answer_position"]),
        cases=tuple(c for c, _ in cases),
        instruction_type=str(item.get("instruction_type") or CELL_LEVEL),
        source_id=str(item["id"]),
    )


def load_item(root: Path, item_id: str, task_id: str) -> SheetTask:
    """One item again, by its SpreadsheetBench id (a test task is reread when it is graded)."""
    for item in read_items(root):
        if str(item["id"]) == item_id:
            return item_task(root, item)
    raise SourceError(f"{task_id}: item {item_id!r} is no longer in {root / 'dataset.json'}")

