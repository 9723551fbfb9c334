"""Families that clean one column or table: dates typed in mixed formats, messy text, duplicates."""

from __future__ import annotations

import datetime
import random
from typing import Any

from evoarena.benchmarks.sheets.core import CELL_LEVEL, SHEET_LEVEL, Case, Sheets, cell_key, col_letter, quote_sheet
from evoarena.benchmarks.sheets.families.base import Draw, Family, Template, column_cells, column_draw, money, pick
from evoarena.benchmarks.sheets.families.lookups import CATEGORIES, MAIN_SHEETS
from evoarena.benchmarks.sheets.layout import FIRST, LAST, TableLayout, put

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]  # fmt: skip
FORMATS = {"YYYY-MM-DD": "%Y-%m-%d", "DD/MM/YYYY": "%d/%m/%Y", "MM/DD/YYYY": "%m/%d/%Y", "DD.MM.YYYY": "%d.%m.%Y",
           "DD-Mon-YYYY": "%d-%b-%Y"}  # fmt: skip
NOT_DATES = ["TBD", "n/a", "unknown", "pending", "-"]

# ---------------------------------------------------------------- dates typed in mixed formats

DATE_TEMPLATES = (
    Template('Column "{date}" in sheet "{sheet}" holds dates typed in different ways: real dates, text such as '
             "2023-03-05 or 5 Mar 2023, and dates with slashes, which are {order}. Write each date into \"{out}\" as "
             'text in the format {fmt}. If a cell is not a date, write "{invalid}"; leave empty rows empty.',
             {"as_date": "0"}),
    Template('Clean the dates in sheet "{sheet}": read "{date}" (mixed formats; dates with slashes are {order}) and '
             'put the date as {fmt} text in "{out}". Non-dates become "{invalid}"; blank rows stay blank.',
             {"as_date": "0"}),
    Template('Clean the dates in sheet "{sheet}": read "{date}" (mixed formats; dates with slashes are {order}) and '
             'put each one into "{out}" as a real date value, not text. Non-dates become "{invalid}"; blank rows stay '
             "blank.", {"as_date": "1"}),
)  # fmt: skip


def _typed(r: random.Random, d: datetime.date, day_first: bool) -> Any:
    """One way a person or a system may have typed the date."""
    how = r.randrange(6)
    if how == 0:
        return datetime.datetime(d.year, d.month, d.day)
    if how == 1:
        text = d.isoformat()
    elif how == 2:
        text = f"{d.day:02d}/{d.month:02d}/{d.year}" if day_first else f"{d.month:02d}/{d.day:02d}/{d.year}"
    elif how == 3:
        text = f"{MONTHS[d.month - 1]} {d.day}, {d.year}"
    elif how == 4:
        text = f"{d.day} {MONTHS[d.month - 1][:3]} {d.year}"
    else:
        text = f"{d.day}/{d.month}/{d.year}" if day_first else f"{d.month}/{d.day}/{d.year}"
    return r.choice(["", "", " "]) + text + r.choice(["", "", " "])


def _written(d: datetime.date, as_date: str, fmt: str) -> Any:
    """The cleaned date: a real date, or text in the asked format."""
    return datetime.datetime(d.year, d.month, d.day) if as_date == "1" else d.strftime(FORMATS[fmt])


def draw_date_clean(r: random.Random) -> Draw:
    sheet = pick(r, MAIN_SHEETS)
    date = pick(r, ["Date", "Order Date", "Start Date", "Invoice Date", "Due"])
    out = pick(r, ["Clean Date", "Date (clean)", "Normalized", "ISO Date"])
    as_date = "1" if r.random() < 0.3 else "0"
    fmt = r.choice(list(FORMATS))
    day_first = r.random() < 0.5
    params = {"sheet": sheet, "date": date, "out": out, "fmt": fmt, "as_date": as_date,
              "order": "day/month/year" if day_first else "month/day/year",
              "invalid": r.choice(["Invalid", "?", "check"])}  # fmt: skip
    n_rows = r.randint(9, 15)
    label = pick(r, ["Customer", "Invoice", "Ticket"])
    layout = TableLayout.draw(r, [label, date, out], distractors=r.randint(0, 2), blanks=r.randint(0, 2))
    cases = []
    for _ in range(3):
        days = [datetime.date(2019, 1, 1) + datetime.timedelta(days=r.randint(0, 2400)) for _ in range(n_rows)]
        bad = set(r.sample(range(n_rows), r.randint(0, 2)))
        typed = [r.choice(NOT_DATES) if i in bad else _typed(r, d, day_first) for i, d in enumerate(days)]
        labels = [f"{label[:3].upper()}{r.randint(1000, 9999)}" for _ in range(n_rows)]
        grid, placed = layout.render(r, {label: labels, date: typed, out: [None] * n_rows})
        written = [params["invalid"] if i in bad else _written(d, as_date, fmt) for i, d in enumerate(days)]
        cases.append(Case(column_cells(sheet, placed, out, written), input_sheets={sheet: grid}))
    return column_draw(params, layout, sheet, out, n_rows, cases)


# ---------------------------------------------------------------- messy text

TEXT_TEMPLATES = (
    Template('In sheet "{sheet}", the names in "{src}" have stray spaces and random capitalisation. Write each name '
             'into "{out}" with single spaces, no leading or trailing spaces, and every word capitalised (e.g. '
             '"  aNA   silva " becomes "Ana Silva"). Leave empty rows empty.', {"mode": "names"}),
    Template('Clean up "{src}" in sheet "{sheet}": trim the names, collapse repeated spaces and use proper case; put '
             'the result in "{out}". Blank rows stay blank.', {"mode": "names"}),
    Template('In sheet "{sheet}", normalise the codes in "{src}" into "{out}": upper case, with every space and hyphen '
             'removed (so " ab-12 3x" becomes "AB123X"). Leave empty rows empty.', {"mode": "codes"}),
    Template('Put the e-mail domain of each address in "{src}" (sheet "{sheet}") into "{out}": the part after the @, '
             "in lower case and without surrounding spaces. Leave empty rows empty.", {"mode": "domain"}),
)  # fmt: skip
DOMAINS = ["example.com", "acme.co.uk", "mail.example.org", "contoso.net", "fabrikam.de"]


def _mess(r: random.Random, word: str) -> str:
    how = r.randrange(4)
    return [word.lower(), word.upper(), word, "".join(c.upper() if r.random() < 0.5 else c.lower() for c in word)][how]


def _spaces(r: random.Random) -> str:
    return r.choice(["", "", " ", "  "])


def _text_item(r: random.Random, mode: str) -> tuple[Any, Any]:
    """(as typed, cleaned)."""
    if mode == "names":
        words = [r.choice(FIRST), r.choice(LAST)] + ([r.choice(LAST)] if r.random() < 0.15 else [])
        typed = _spaces(r) + (" " + _spaces(r)).join(_mess(r, w) for w in words) + _spaces(r)
        return typed, " ".join(words)
    if mode == "codes":
        letters = "".join(r.choice("ABCDEFGHKLMNPRSTX") for _ in range(r.randint(2, 3)))
        digits = str(r.randint(10, 99999))
        tail = r.choice(["", "", r.choice("ABX")])
        seps = [r.choice(["", "-", " ", "-"]), r.choice(["", "", " "])]
        typed = _spaces(r) + _mess(r, letters) + seps[0] + digits + seps[1] + tail.lower() + _spaces(r)
        return typed, f"{letters}{digits}{tail}".upper()
    first, last, domain = r.choice(FIRST), r.choice(LAST), r.choice(DOMAINS)
    typed = _spaces(r) + f"{_mess(r, first)}.{_mess(r, last)}@{_mess(r, domain)}" + _spaces(r)
    return typed, domain


def draw_text_clean(r: random.Random) -> Draw:
    mode = r.choice(["names", "names", "codes", "domain"])
    sheet = pick(r, MAIN_SHEETS)
    src = pick(r, {"names": ["Name", "Full Name", "Contact"], "codes": ["Code", "SKU", "Ref"],
                   "domain": ["Email", "E-mail", "Contact Email"]}[mode])  # fmt: skip
    out = pick(r, ["Clean", f"{src} (clean)", "Result", "Output"])
    params = {"sheet": sheet, "src": src, "out": out, "mode": mode}
    n_rows = r.randint(9, 15)
    layout = TableLayout.draw(r, [src, out], distractors=r.randint(1, 2), blanks=r.randint(0, 2))
    cases = []
    for _ in range(3):
        pairs = [_text_item(r, mode) for _ in range(n_rows)]
        grid, placed = layout.render(r, {src: [a for a, _ in pairs], out: [None] * n_rows})
        cases.append(Case(column_cells(sheet, placed, out, [clean for _, clean in pairs]), input_sheets={sheet: grid}))
    return column_draw(params, layout, sheet, out, n_rows, cases)


# ---------------------------------------------------------------- duplicates

DEDUPE_TEMPLATES = (
    Template('List the distinct values of "{col}" (sheet "{sheet}") in column "{out}" of sheet "{dest}", from the row '
             "below its header down, in order of first appearance. Compare values ignoring letter case and surrounding "
             "spaces; write each one trimmed, as it is spelled where it first appears. Skip empty cells.",
             {"mode": "list"}),
    Template('Sheet "{dest}" has a column "{out}": fill it, from the row under the header, with each "{col}" of sheet '
             '"{sheet}" once (a case-insensitive, space-trimmed unique list, first occurrence first, written trimmed). '
             "Ignore empty cells.", {"mode": "list"}),
    Template('Copy the table of sheet "{sheet}" (header row and all its columns) to a new sheet "{dest}", starting at '
             'A1, keeping only the first row of each "{key}" and leaving out empty rows. Keep the column order and '
             "the cell values as they are.", {"mode": "rows"}),
)  # fmt: skip


def _variant(r: random.Random, text: str) -> str:
    return _spaces(r) + r.choice([text, text, text.lower(), text.upper()]) + _spaces(r)


def draw_dedupe(r: random.Random) -> Draw:
    mode = r.choice(["list", "list", "rows"])
    sheet = pick(r, MAIN_SHEETS)
    dest = pick(r, ["Unique", "Distinct", "Clean", "Deduped", "Sheet2"], avoid={sheet})
    col = pick(r, ["Customer", "City", "Supplier", "Store"])
    key = pick(r, ["Order ID", "Invoice No.", "Ticket"])
    out = pick(r, [f"Unique {col}", f"{col} list", "Distinct"])
    params = {"sheet": sheet, "dest": dest, "col": col, "out": out, "key": key, "mode": mode}
    pool = {"Customer": [f"{f} {ln}" for f in FIRST[:8] for ln in LAST[:3]], "City": CATEGORIES["Store"] +
            ["Vienna", "Oslo"], "Supplier": ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark"],
            "Store": [f"Store {n}" for n in range(1, 12)]}[col]  # fmt: skip
    n_rows = r.randint(10, 16)
    headers = [key, col, "Amount"]
    layout = TableLayout.draw(r, headers, distractors=r.randint(0, 2), blanks=r.randint(0, 2),
                              fixed_order=mode == "rows")  # fmt: skip
    dest_col, dest_row = r.choice([1, 1, 2]), r.choice([1, 1, 2])
    cases = []
    for _ in range(3):
        names = r.sample(pool, min(len(pool), r.randint(4, 7)))
        picks = [r.choice(names) for _ in range(n_rows)]
        keys = r.sample(range(5000, 5999), n_rows)
        for i in range(1, n_rows):  # about a quarter of the rows repeat an earlier key
            if r.random() < 0.25:
                keys[i] = keys[r.randrange(i)]
        shown = [_variant(r, p) for p in picks] if mode == "list" else picks
        amounts = [money(r, 5, 500) for _ in range(n_rows)]
        sheets: Sheets = {}
        sheets[sheet], placed = layout.render(r, {key: keys, col: shown, "Amount": amounts})
        if mode == "list":
            expected, target = _unique_list(sheets, params, shown, n_rows, dest_col, dest_row)
        else:
            expected, target = _unique_rows(sheets[sheet], placed.header_row, placed.rows, params, layout, n_rows)
        cases.append(Case(expected, input_sheets=sheets))
    return Draw(params, target, tuple(cases), instruction_type=SHEET_LEVEL if mode == "rows" else CELL_LEVEL)


def _unique_list(
    sheets: Sheets, params: dict[str, str], shown: list[str], n_rows: int, dest_col: int, dest_row: int
) -> tuple[dict[str, Any], str]:
    grid: list[list[Any]] = []
    put(grid, dest_row, dest_col, params["out"])
    sheets[params["dest"]] = grid
    seen: list[str] = []
    for p in shown:
        if p.strip().lower() not in [s.lower() for s in seen]:
            seen.append(p.strip())
    letter = col_letter(dest_col)
    cells = [f"{letter}{dest_row + 1 + i}" for i in range(n_rows)]
    expected = {cell_key(params["dest"], c): (seen[i] if i < len(seen) else None) for i, c in enumerate(cells)}
    return expected, f"{quote_sheet(params['dest'])}!{cells[0]}:{cells[-1]}"


def _unique_rows(
    grid: list[list[Any]], header_row: int, rows: list[int], params: dict[str, str], layout: TableLayout, n_rows: int
) -> tuple[dict[str, Any], str]:
    first, width = layout.start_col, len(layout.order)
    kept = [[grid[header_row - 1][first - 1 + j] for j in range(width)]]
    seen: set[Any] = set()
    key_at = layout.order.index(params["key"])
    for row in rows:
        values = [grid[row - 1][first - 1 + j] if first - 1 + j < len(grid[row - 1]) else None for j in range(width)]
        if values[key_at] not in seen:
            seen.add(values[key_at])
            kept.append(values)
    expected: dict[str, Any] = {}
    for i in range(n_rows + 1):
        for j in range(width):
            expected[cell_key(params["dest"], f"{col_letter(1 + j)}{1 + i}")] = kept[i][j] if i < len(kept) else None
    return expected, f"{quote_sheet(params['dest'])}!A1:{col_letter(width)}{n_rows + 1}"


FAMILIES = (
    Family("date_clean", DATE_TEMPLATES, draw_date_clean, "dates typed in mixed formats, to one format or real dates"),
    Family("text_clean", TEXT_TEMPLATES, draw_text_clean, "trim and recase names, normalise codes, extract domains"),
    Family("dedupe", DEDUPE_TEMPLATES, draw_dedupe, "a unique list, or a copy of the table without duplicate rows"),
)
