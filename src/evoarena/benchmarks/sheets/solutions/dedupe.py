"""Reference program for `dedupe`: a case- and space-insensitive unique list, or the table copied to a new sheet
keeping the first row of each key."""

from openpyxl import load_workbook

from evoarena.benchmarks.sheets.solutions._common import PARAMS, blank, find_header, key  # render: drop


def unique_list(wb):
    ws = wb[PARAMS["sheet"]]
    top, cols = find_header(ws, {PARAMS["col"]})
    seen: dict[str, str] = {}
    for r in range(top + 1, ws.max_row + 1):
        value = ws.cell(r, cols[PARAMS["col"]]).value
        if not blank(value):
            seen.setdefault(str(value).strip().lower(), str(value).strip())
    dest = wb[PARAMS["dest"]]
    head, dcols = find_header(dest, {PARAMS["out"]})
    for i, value in enumerate(seen.values()):
        dest.cell(head + 1 + i, dcols[PARAMS["out"]]).value = value


def unique_rows(wb):
    ws = wb[PARAMS["sheet"]]
    top, cols = find_header(ws, {PARAMS["key"]})
    first = min(c.column for c in ws[top] if not blank(c.value))
    last = max(c.column for c in ws[top] if not blank(c.value))
    dest = wb.create_sheet(PARAMS["dest"])
    out_row, seen = 1, set()
    for r in range(top, ws.max_row + 1):
        values = [ws.cell(r, c).value for c in range(first, last + 1)]
        if all(blank(v) for v in values):
            continue
        k = key(ws.cell(r, cols[PARAMS["key"]]).value)
        if r > top and k in seen:
            continue
        seen.add(k)
        for j, v in enumerate(values):
            dest.cell(out_row, 1 + j).value = v
        out_row += 1


def solve(input_path, output_path):
    wb = load_workbook(input_path)
    if PARAMS["mode"] == "rows":
        unique_rows(wb)
    else:
        unique_list(wb)
    wb.save(output_path)
