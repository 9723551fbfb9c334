"""The program that runs inside the sandbox (as main.py, next to the solver's `solution.py`): for each case it
writes the input workbook, calls `solve(input_path, output_path)`, reads the target cells of the output back
(recomputing formulas), and prints them as one JSON line. It imports nothing from evoarena, so it runs under
any isolation; the parent imports `normalize` and `style_of` from here so both sides compare the same way."""

import base64
import contextlib
import datetime
import json
import math
import os
import re
import sys
import traceback

MARK = "@@EVOARENA-SHEETS@@"
_EPOCH = datetime.datetime(1899, 12, 30)


def normalize(value):
    """A cell value as graded, in SpreadsheetBench's way: empty text is empty, numbers (and numeric text, and
    booleans) are floats rounded to 2 places, dates are whole Excel day numbers, times are "HH:MM"."""
    if value is None or (isinstance(value, str) and value == ""):
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars from the formula engine
        value = value.item()
    if isinstance(value, datetime.datetime):
        delta = value - _EPOCH
        return float(round(delta.days + delta.seconds / 86400.0))
    if isinstance(value, datetime.date):
        return float((value - _EPOCH.date()).days)
    if isinstance(value, datetime.time):
        return value.strftime("%H:%M")
    if isinstance(value, (bool, int, float)):
        number = float(value)
        return round(number, 2) if math.isfinite(number) else str(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return value
        return round(number, 2) if math.isfinite(number) else value
    return str(value)


def style_of(cell):
    """Fill foreground, fill background and font colour (RGB, alpha dropped), as SpreadsheetBench compares."""

    def rgb(color):
        return color.rgb[-6:] if color is not None and isinstance(color.rgb, str) else "000000"

    return [rgb(cell.fill.fgColor), rgb(cell.fill.bgColor), rgb(cell.font.color if cell.font else None)]


def _is_formula(value):
    return (isinstance(value, str) and value.startswith("=")) or type(value).__name__ in ("ArrayFormula",
                                                                                          "DataTableFormula")


_WHOLE_COLUMNS = re.compile(r"(?<![A-Za-z0-9_.])(\$?[A-Za-z]{1,3}):(\$?[A-Za-z]{1,3})(?![A-Za-z0-9_(])")


def _bound_columns(formula, last_row):
    """`SUM(B:B)` → `SUM(B1:B<last_row>)` outside string literals: the same value on this workbook, and the
    formula engine would otherwise expand every whole column to a million rows."""
    parts = formula.split('"')
    for i in range(0, len(parts), 2):
        parts[i] = _WHOLE_COLUMNS.sub(lambda m: f"{m.group(1)}1:{m.group(2)}{last_row}", parts[i])
    return '"'.join(parts)


def _excel_trim(text):
    return " ".join(word for word in text.split(" ") if word)


def _engine():
    """The `formulas` package, with TRIM fixed to Excel's meaning (collapse inner runs of spaces too)."""
    import formulas
    from formulas.functions import text as text_functions

    kw = getattr(text_functions, "_kw1", None)
    if kw is not None:
        text_functions.FUNCTIONS["TRIM"] = text_functions.wrap_ufunc(_excel_trim, **kw)
    return formulas


def _recompute(path, wanted):
    """Values of the wanted (sheet, cell) pairs after evaluating every formula of the workbook."""
    from openpyxl import load_workbook

    wb = load_workbook(path)
    last_row = max([ws.max_row for ws in wb.worksheets] + [1])
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, str) and c.value.startswith("=") and ":" in c.value:
                    c.value = _bound_columns(c.value, last_row)
    copy = os.path.join(os.path.dirname(path), "recompute.xlsx")
    wb.save(copy)
    solution = _engine().ExcelModel().loads(copy).finish().calculate()
    book = "[" + os.path.basename(copy).upper() + "]"
    by_ref = {}
    for ref, ranges in solution.items():
        sheet, _, cell = str(ref).upper().rpartition("!")
        if not sheet or ":" in cell:
            continue
        sheet = sheet.strip("'").replace(book, "").replace("''", "'")
        by_ref[(sheet, cell.replace("$", ""))] = ranges
    out = {}
    for sheet, cell in wanted:
        ranges = by_ref.get((sheet.upper(), cell.upper()))
        if ranges is None:
            continue
        value = ranges.value[0, 0] if hasattr(ranges, "value") else ranges
        if type(value).__name__ == "XlError":
            value = str(value)
        elif type(value).__name__ in ("EmptyValue", "_EmptyValue") or str(value) == "empty":
            value = None
        out[(sheet, cell)] = value
    return out


def read_cells(path, cells, styles):
    from openpyxl import load_workbook

    wb = load_workbook(path)
    values: list = []
    looks: list = []
    missing: list = []
    formulas: list = []
    for sheet, cell in cells:
        if sheet not in wb.sheetnames:
            values.append(None)
            looks.append(None)
            if sheet not in missing:
                missing.append(sheet)
            continue
        c = wb[sheet][cell]
        values.append(c.value)
        looks.append(style_of(c) if styles else None)
        if _is_formula(c.value):
            formulas.append(len(values) - 1)
    note = None
    if formulas:
        try:
            computed = _recompute(path, [cells[i] for i in formulas])
        except Exception as e:  # noqa: BLE001 - any failure of the engine is reported, never raised
            computed = {}
            note = "formulas could not be recomputed: " + (type(e).__name__ + ": " + str(e))[:200]
        for i in formulas:
            values[i] = computed.get(tuple(cells[i]), "#FORMULA? " + str(values[i])[:60])
    return [normalize(v) for v in values], looks, missing, len(formulas), note


def _emit(payload):
    data = (MARK + json.dumps(payload) + "\n").encode("utf-8")
    while data:
        data = data[os.write(1, data) :]


def main():
    config = json.loads(sys.stdin.read())
    try:
        with contextlib.redirect_stdout(sys.stderr):
            import solution

            solve = solution.solve
    except BaseException as e:  # noqa: BLE001 - whatever the solver's module does is reported
        _emit({"load_error": (type(e).__name__ + ": " + str(e))[:500]})
        return
    results = []
    for i, case in enumerate(config["cases"]):
        folder = os.path.abspath(f"case_{i + 1}")
        os.makedirs(folder, exist_ok=True)
        source, target = os.path.join(folder, "input.xlsx"), os.path.join(folder, "output.xlsx")
        with open(source, "wb") as fh:
            fh.write(base64.b64decode(case["xlsx"]))
        try:
            with contextlib.redirect_stdout(sys.stderr):
                solve(source, target)
        except BaseException as e:  # noqa: BLE001
            tail = traceback.format_exception(type(e), e, e.__traceback__)[-1].strip()
            results.append({"error": "solve raised " + tail[:400]})
            continue
        if not os.path.isfile(target):
            results.append({"error": "solve wrote no workbook at output_path"})
            continue
        try:
            values, looks, missing, n_formulas, note = read_cells(target, case["cells"], config.get("styles"))
        except Exception as e:  # noqa: BLE001
            why = (type(e).__name__ + ": " + str(e))[:300]
            results.append({"error": "the output workbook could not be read: " + why})
            continue
        results.append({"values": values, "styles": looks, "missing_sheets": missing, "formulas": n_formulas,
                        "note": note})
    _emit({"results": results})


if __name__ == "__main__":
    main()
