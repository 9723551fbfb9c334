"""Reference program for `lookup`: build a key → value table from the lookup sheet, then fill the column."""

from openpyxl import load_workbook

from evoarena.benchmarks.sheets.solutions._common import PARAMS, blank, find_header, key  # render: drop


def solve(input_path, output_path):
    wb = load_workbook(input_path)
    src = wb[PARAMS["lookup_sheet"]]
    top, cols = find_header(src, {PARAMS["lk_key"], PARAMS["lk_val"]})
    table: dict[str, object] = {}
    for r in range(top + 1, src.max_row + 1):
        k = src.cell(r, cols[PARAMS["lk_key"]]).value
        if not blank(k):
            table.setdefault(key(k), src.cell(r, cols[PARAMS["lk_val"]]).value)
    ws = wb[PARAMS["main"]]
    top, cols = find_header(ws, {PARAMS["key"], PARAMS["out"]})
    for r in range(top + 1, ws.max_row + 1):
        k = ws.cell(r, cols[PARAMS["key"]]).value
        if not blank(k):
            ws.cell(r, cols[PARAMS["out"]]).value = table.get(key(k), PARAMS["missing"])
    wb.save(output_path)
