"""Reference program for `pivot`: sum the values per (row label, column label), then fill the target grid,
whose labels sit left of and above it."""

from openpyxl import load_workbook

from evoarena.benchmarks.sheets.solutions._common import (  # render: drop
    PARAMS,  # render: drop
    blank,  # render: drop
    find_header,  # render: drop
    number,  # render: drop
    target_range,  # render: drop
)  # render: drop


def solve(input_path, output_path):
    wb = load_workbook(input_path)
    data = wb[PARAMS["data"]]
    top, cols = find_header(data, {PARAMS["row_dim"], PARAMS["col_dim"], PARAMS["value"]})
    sums: dict[tuple[str, str], float] = {}
    for r in range(top + 1, data.max_row + 1):
        a = data.cell(r, cols[PARAMS["row_dim"]]).value
        b = data.cell(r, cols[PARAMS["col_dim"]]).value
        v = number(data.cell(r, cols[PARAMS["value"]]).value)
        if blank(a) or blank(b) or v is None:
            continue
        k = (str(a).strip(), str(b).strip())
        sums[k] = sums.get(k, 0) + v
    sheet, c1, r1, c2, r2 = target_range()
    ws = wb[sheet]
    for r in range(r1, r2 + 1):
        label = str(ws.cell(r, c1 - 1).value).strip()
        total = 0.0
        for c in range(c1, c2 + 1):
            head = str(ws.cell(r1 - 1, c).value).strip()
            if PARAMS["total"] == "1" and head == "Total":
                ws.cell(r, c).value = round(total, 2)
            else:
                v = sums.get((label, head), 0)
                total += v
                ws.cell(r, c).value = round(v, 2)
    wb.save(output_path)
