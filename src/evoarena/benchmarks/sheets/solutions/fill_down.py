"""Reference program for `fill_down`: carry the last group label down over rows that have an item."""

from openpyxl import load_workbook

from evoarena.benchmarks.sheets.solutions._common import PARAMS, blank, find_header  # render: drop


def solve(input_path, output_path):
    wb = load_workbook(input_path)
    ws = wb[PARAMS["sheet"]]
    top, cols = find_header(ws, {PARAMS["group"], PARAMS["item"]})
    current = None
    for r in range(top + 1, ws.max_row + 1):
        group = ws.cell(r, cols[PARAMS["group"]])
        if not blank(group.value):
            current = group.value
        elif not blank(ws.cell(r, cols[PARAMS["item"]]).value):
            group.value = current
    wb.save(output_path)
