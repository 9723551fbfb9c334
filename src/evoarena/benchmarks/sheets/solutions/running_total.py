"""Reference program for `running_total`: a running sum down the rows, restarting when the group changes."""

from openpyxl import load_workbook

from evoarena.benchmarks.sheets.solutions._common import PARAMS, find_header, number  # render: drop


def solve(input_path, output_path):
    wb = load_workbook(input_path)
    ws = wb[PARAMS["sheet"]]
    wanted = {PARAMS["amount"], PARAMS["out"]} | ({PARAMS["group"]} if PARAMS["reset"] == "1" else set())
    top, cols = find_header(ws, wanted)
    total, previous = 0, None
    for r in range(top + 1, ws.max_row + 1):
        if PARAMS["reset"] == "1":
            group = ws.cell(r, cols[PARAMS["group"]]).value
            if group is None:
                continue
            if group != previous:
                total = 0
            previous = group
        total += number(ws.cell(r, cols[PARAMS["amount"]]).value) or 0
        ws.cell(r, cols[PARAMS["out"]]).value = round(total, 2)
    wb.save(output_path)
