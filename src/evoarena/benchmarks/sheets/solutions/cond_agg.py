"""Reference program for `cond_agg`: group the data sheet's amounts by category (and status), then aggregate."""

from openpyxl import load_workbook

from evoarena.benchmarks.sheets.solutions._common import PARAMS, blank, find_header, number  # render: drop


def solve(input_path, output_path):
    wb = load_workbook(input_path)
    data = wb[PARAMS["data"]]
    wanted = {PARAMS["crit"], PARAMS["amount"]}
    if PARAMS["cond"] == "1":
        wanted.add(PARAMS["status"])
    top, cols = find_header(data, wanted)
    groups: dict[str, list[float]] = {}
    for r in range(top + 1, data.max_row + 1):
        crit = data.cell(r, cols[PARAMS["crit"]]).value
        amount = number(data.cell(r, cols[PARAMS["amount"]]).value)
        if blank(crit) or amount is None:
            continue
        if PARAMS["cond"] == "1" and str(data.cell(r, cols[PARAMS["status"]]).value).strip() != PARAMS["status_value"]:
            continue
        groups.setdefault(str(crit).strip(), []).append(amount)
    ws = wb[PARAMS["summary"]]
    top, cols = find_header(ws, {PARAMS["crit"], PARAMS["out"]})
    for r in range(top + 1, ws.max_row + 1):
        crit = ws.cell(r, cols[PARAMS["crit"]]).value
        if blank(crit):
            continue
        values = groups.get(str(crit).strip(), [])
        if PARAMS["agg"] == "count":
            result: float = len(values)
        elif PARAMS["agg"] == "average":
            result = round(sum(values) / len(values), 2) if values else 0
        else:
            result = round(sum(values), 2)
        ws.cell(r, cols[PARAMS["out"]]).value = result
    wb.save(output_path)
