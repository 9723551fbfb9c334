"""The SpreadsheetBench loader on a tiny folder in the released layout (dataset.json + spreadsheet/<id>/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openpyxl import Workbook
from openpyxl.styles import PatternFill

from evoarena.benchmarks.sheets import SheetsBenchmark
from evoarena.benchmarks.sheets.loader import SourceError, load_source

YELLOW = PatternFill(start_color="FFFF00", end_color="FFFF00", fill_type="solid")


def _book(path: Path, values: list[int], answer: bool, fill: bool = False) -> None:
    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "Sheet1"
    ws["A1"], ws["B1"] = "Value", "Double"
    for i, v in enumerate(values, start=2):
        ws.cell(i, 1, v)
        if answer:
            ws.cell(i, 2, v * 2)
            if fill and v > 5:
                ws.cell(i, 2).fill = YELLOW
    wb.create_sheet("Notes")["A1"] = "keep"
    wb.save(path)


def make_source(root: Path, n_items: int = 3) -> Path:
    items = []
    for k in range(n_items):
        tid = f"{100 + k}"
        folder = root / "spreadsheet" / tid
        folder.mkdir(parents=True)
        verified = k == 1  # SpreadsheetBench Verified names its files init/golden
        for n in range(1, 4):
            values = [n + k, 3 * n, 7 + n]
            _book(folder / f"{n}_{tid}_{'init' if verified else 'input'}.xlsx", values, answer=False)
            _book(folder / f"{n}_{tid}_{'golden' if verified else 'answer'}.xlsx", values, answer=True, fill=k == 2)
        items.append({"id": tid, "instruction": "Double each value into column B." + (" Highlight doubles above 10 in "
                      "yellow." if k == 2 else ""), "spreadsheet_path": f"spreadsheet/{tid}",
                      "instruction_type": "Cell-Level Manipulation",
                      "answer_position": "B2:B4" if k != 1 else "'Sheet1'!B2:B4"})  # fmt: skip
    (root / "dataset.json").write_text(json.dumps(items), "utf-8")
    return root


DOUBLE = """
from openpyxl import load_workbook

def solve(input_path, output_path):
    wb = load_workbook(input_path)
    ws = wb["Sheet1"]
    for r in range(2, ws.max_row + 1):
        ws.cell(r, 2).value = ws.cell(r, 1).value * 2
    wb.save(output_path)
"""


def test_loader_reads_items_cases_and_expected_values(tmp_path: Path) -> None:
    root = make_source(tmp_path / "sb")
    tasks = load_source(root, seed=0, total=None, ratio=(1, 1, 1))
    assert sorted(st.id for _, st in tasks) == ["sb-100", "sb-101", "sb-102"]
    assert [split for split, _ in tasks] == ["train", "val", "test"]
    by_id = {st.id: st for _, st in tasks}
    plain = by_id["sb-100"]
    assert len(plain.cases) == 3 and plain.target == "B2:B4"
    assert plain.cases[0].expected == {"Sheet1!B2": 2, "Sheet1!B3": 6, "Sheet1!B4": 16}
    assert by_id["sb-101"].cases[2].expected["Sheet1!B3"] == 18  # init/golden files, quoted sheet name
    assert by_id["sb-102"].cases[0].expected_styles is not None


def test_loaded_tasks_are_graded_by_value_and_colour(tmp_path: Path) -> None:
    root = make_source(tmp_path / "sb")
    bench = SheetsBenchmark(source=str(root), ratio=(1, 0, 0))
    tasks = {t.id: t for t in bench.build()}
    assert {t.split for t in tasks.values()} == {"train"}
    assert "Double each value" in tasks["sb-100"].prompt and 'Sheet "Notes"' in tasks["sb-100"].prompt
    assert json.loads(tasks["sb-100"].reference)["expected_case_1"]["Sheet1!B2"] == 2
    assert bench.grade(tasks["sb-100"], DOUBLE).passed
    missing_fill = bench.grade(tasks["sb-102"], DOUBLE)  # values right, highlight missing
    assert not missing_fill.passed and "B4 has fill/background/font colours 000000" in missing_fill.message
    held_out = SheetsBenchmark(source=str(root), ratio=(0, 0, 1))
    test = {t.id: t for t in held_out.build()}["sb-100"]
    assert test.split == "test" and held_out.grade(test, DOUBLE).passed  # reread from the folder when graded
    assert held_out._tasks == {}


def test_a_folder_without_dataset_json_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no dataset.json"):
        load_source(tmp_path, seed=0, total=None, ratio=(2, 1, 8))
