"""Reference program for `text_clean`: proper-case names, normalised codes, or e-mail domains."""

from openpyxl import load_workbook

from evoarena.benchmarks.sheets.solutions._common import PARAMS, blank, find_header  # render: drop


def clean(value):
    text = str(value).strip()
    if PARAMS["mode"] == "names":
        return " ".join(w[:1].upper() + w[1:].lower() for w in text.split())
    if PARAMS["mode"] == "codes":
        return text.replace(" ", "").replace("-", "").upper()
    return text.rpartition("@")[2].strip().lower()


def solve(input_path, output_path):
    wb = load_workbook(input_path)
    ws = wb[PARAMS["sheet"]]
    top, cols = find_header(ws, {PARAMS["src"], PARAMS["out"]})
    for r in range(top + 1, ws.max_row + 1):
        value = ws.cell(r, cols[PARAMS["src"]]).value
        if not blank(value):
            ws.cell(r, cols[PARAMS["out"]]).value = clean(value)
    wb.save(output_path)
