"""Reference program for `seq_scan`: scan down, compare each value with the reference, and move the reference
to the value of every flagged row."""

from openpyxl import load_workbook

from evoarena.benchmarks.sheets.solutions._common import PARAMS, find_header, number  # render: drop


def solve(input_path, output_path):
    wb = load_workbook(input_path)
    ws = wb[PARAMS["sheet"]]
    top, cols = find_header(ws, {PARAMS["value"], PARAMS["out"]})
    pct = float(PARAMS["pct"]) / 100
    no = PARAMS.get("no", "") or None
    reference = None
    for r in range(top + 1, ws.max_row + 1):
        value = number(ws.cell(r, cols[PARAMS["value"]]).value)
        if value is None:
            continue
        if reference is None:
            reference = value
            ws.cell(r, cols[PARAMS["out"]]).value = no
            continue
        above = PARAMS["dir"] == "above"
        hit = value >= reference * (1 + pct) if above else value <= reference * (1 - pct)
        ws.cell(r, cols[PARAMS["out"]]).value = PARAMS["yes"] if hit else no
        if hit:
            reference = value  # update the reference
    wb.save(output_path)
