"""Families that read one sheet to fill another: cross-sheet lookup, conditional aggregation, pivot summary."""

from __future__ import annotations

import random
from typing import Any

from evoarena.benchmarks.sheets.core import Case, Sheets, cell_key, col_letter, quote_sheet
from evoarena.benchmarks.sheets.families.base import Draw, Family, Template, column_cells, column_draw, money, pick
from evoarena.benchmarks.sheets.layout import FIRST, LAST, TableLayout, put

MAIN_SHEETS = ["Orders", "Sales", "Invoices", "Sheet1", "Data", "Transactions", "Input"]
LOOKUP_SHEETS = ["Products", "Price List", "Customers", "Lookup", "Master", "Sheet2", "Reference"]
SUMMARY_SHEETS = ["Summary", "Report", "Dashboard", "Totals", "Sheet2", "Overview"]
MISSING = ["Not found", "N/A", "#N/A", "Missing", "?"]
CATEGORIES = {
    "Region": ["North", "South", "East", "West", "Central"],
    "Department": ["Sales", "Marketing", "IT", "HR", "Finance", "Operations"],
    "Product line": ["Hardware", "Software", "Services", "Training"],
    "Store": ["Berlin", "Lyon", "Porto", "Turin", "Ghent", "Krakow"],
    "Channel": ["Online", "Retail", "Wholesale", "Partner"],
    "Quarter": ["Q1", "Q2", "Q3", "Q4"],
    "Product": ["Widget", "Gadget", "Gizmo", "Doohickey", "Sprocket"],
}
AMOUNTS = ["Amount", "Revenue", "Sales", "Cost", "Net Amount", "Value"]
STATUS = {"Status": ["Paid", "Open", "Cancelled"], "State": ["Closed", "Pending"], "Payment": ["Received", "Due"]}


def _names(r: random.Random, k: int) -> list[str]:
    out: list[str] = []
    while len(out) < k:
        name = f"{r.choice(FIRST)} {r.choice(LAST)}"
        if name not in out:
            out.append(name)
    return out


# ---------------------------------------------------------------- lookup across sheets (VLOOKUP / XLOOKUP)

_KEYS = {"text": ["Product Code", "SKU", "Item No.", "Part #"], "number": ["Customer ID", "Cust ID", "Client No.",
                                                                              "Emp ID", "Account"]}  # fmt: skip
_VALUES = {"text": {"Unit Price": "money", "List Price": "money", "Cost Center": "code"},
           "number": {"Customer Name": "name", "Account Manager": "name", "Region": "region"}}

LOOKUP_TEMPLATES = (
    Template('In sheet "{main}", fill column "{out}" with the "{lk_val}" of each row\'s "{key}", looked up in sheet '
             '"{lookup_sheet}" (match "{key}" against its "{lk_key}" column). If the "{key}" is not listed there, '
             'write "{missing}". Leave rows without a "{key}" empty.{note}'),
    Template('For every row of "{main}" that has a "{key}", put the matching "{lk_val}" from the "{lookup_sheet}" '
             'sheet (where the key column is "{lk_key}") into "{out}"; write "{missing}" when there is no '
             "match.{note}"),
    Template('VLOOKUP-style: look up each "{key}" of sheet "{main}" in column "{lk_key}" of sheet "{lookup_sheet}" and '
             'return its "{lk_val}" into column "{out}". Keys that are not found get "{missing}"; blank rows stay '
             "blank.{note}"),
)  # fmt: skip


def _lookup_value(r: random.Random, kind: str) -> Any:
    if kind == "money":
        return money(r, 2, 400)
    if kind == "name":
        return f"{r.choice(FIRST)} {r.choice(LAST)}"
    if kind == "region":
        return r.choice(CATEGORIES["Region"])
    return f"CC-{r.randint(100, 999)}"


def draw_lookup(r: random.Random) -> Draw:
    kind = r.choice(["text", "number"])
    key = pick(r, _KEYS[kind])
    lk_key = r.choice([key, pick(r, _KEYS[kind], avoid={key})])
    lk_val = pick(r, list(_VALUES[kind]))
    out = r.choice([lk_val, f"{lk_val} (lookup)", "Result"])
    main = pick(r, MAIN_SHEETS)
    lookup_sheet = pick(r, LOOKUP_SHEETS, avoid={main})
    mixed = r.random() < 0.6
    note = ""
    if mixed:
        note = (" IDs may be stored as text in one sheet and as numbers in the other." if kind == "number"
                else " Some codes have stray spaces around them; ignore those.")  # fmt: skip
    params = {"main": main, "lookup_sheet": lookup_sheet, "key": key, "out": out, "lk_key": lk_key,
              "lk_val": lk_val, "missing": r.choice(MISSING), "note": note}  # fmt: skip
    n_keys, n_rows = r.randint(7, 12), r.randint(9, 16)
    other = pick(r, ["Qty", "Units", "Hours"])
    main_layout = TableLayout.draw(r, [key, other, out], distractors=r.randint(0, 2), blanks=r.randint(0, 2))
    lk_layout = TableLayout.draw(r, [lk_key, lk_val], distractors=r.randint(0, 2))
    cases = []
    for _ in range(3):
        if kind == "number":
            keys: list[Any] = r.sample(range(1001, 1999), n_keys + 3)
        else:
            keys = [f"{r.choice('ABCP')}-{n:04d}" for n in r.sample(range(1, 9999), n_keys + 3)]
        known, unknown = keys[:n_keys], keys[n_keys:]
        table = {k: _lookup_value(r, _VALUES[kind][lk_val]) for k in known}
        wanted = [r.choice(known) if r.random() < 0.85 else r.choice(unknown) for _ in range(n_rows)]
        shown: list[Any] = []
        for k in wanted:
            if mixed and r.random() < 0.35:
                k = str(k) if kind == "number" else f" {k} " if r.random() < 0.5 else f"{k} "
            shown.append(k)
        sheets: Sheets = {}
        sheets[main], placed = main_layout.render(
            r, {key: shown, other: [r.randint(1, 40) for _ in wanted], out: [None] * n_rows}
        )
        sheets[lookup_sheet], _ = lk_layout.render(r, {lk_key: list(table), lk_val: list(table.values())})
        found = [table.get(k, params["missing"]) for k in wanted]
        cases.append(Case(column_cells(main, placed, out, found), input_sheets=sheets))
    return column_draw(params, main_layout, main, out, n_rows, cases)


# ---------------------------------------------------------------- conditional aggregation (SUMIF, COUNTIFS, …)

AGG_TEMPLATES = (
    Template('In sheet "{summary}", next to each "{crit}" listed there, write in column "{out}" the {agg} of '
             '"{amount}" over the rows of sheet "{data}" with that "{crit}". Write 0 when no row matches.{note}',
             {"cond": "0"}),
    Template('Fill "{out}" on sheet "{summary}" with the conditional {agg} of "{amount}" from sheet "{data}", grouped '
             'by "{crit}" (the values listed in the summary); 0 if no rows match.{note}', {"cond": "0"}),
    Template('In sheet "{summary}", for each "{crit}" listed there, write in "{out}" the {agg} of "{amount}" over the '
             'rows of sheet "{data}" that have that "{crit}" and "{status}" equal to "{status_value}". Write 0 when no '
             "row matches.{note}", {"cond": "1"}),
    Template('Fill "{out}" in sheet "{summary}" with the {agg} of "{amount}" from sheet "{data}" per "{crit}", '
             'counting only rows whose "{status}" is "{status_value}" (0 if none).{note}', {"cond": "1"}),
)  # fmt: skip


def _maybe_text(r: random.Random, value: float, mixed: bool) -> Any:
    if mixed and r.random() < 0.2:
        return r.choice([f"{value:,.2f}", f" {value} ", str(value)])
    return value


def _aggregate(agg: str, values: list[float]) -> float:
    if agg == "count":
        return len(values)
    if agg == "average":
        return round(sum(values) / len(values), 2) if values else 0
    return round(sum(values), 2)


def draw_cond_agg(r: random.Random) -> Draw:
    crit = pick(r, [k for k in CATEGORIES if k != "Quarter"])
    amount = pick(r, AMOUNTS)
    status = pick(r, list(STATUS))
    agg = r.choice(["sum", "count", "average"])
    out = r.choice({"sum": ["Total", f"Total {amount}", "Sum"], "count": ["Count", "Rows", "# of rows"],
                    "average": ["Average", f"Avg {amount}", "Mean"]}[agg])  # fmt: skip
    data = pick(r, MAIN_SHEETS)
    summary = pick(r, SUMMARY_SHEETS, avoid={data})
    mixed = r.random() < 0.5
    cond = r.choice(["0", "1"])
    params = {"data": data, "summary": summary, "crit": crit, "amount": amount, "out": out, "agg": agg, "cond": cond,
              "status": status, "status_value": STATUS[status][0],
              "note": " Some amounts are stored as text; count them as numbers." if mixed else ""}  # fmt: skip
    n_rows = r.randint(14, 26)
    labels = r.sample(CATEGORIES[crit], k=min(len(CATEGORIES[crit]), r.randint(4, 6)))
    layout = TableLayout.draw(r, ["Date", crit, amount, status], distractors=r.randint(0, 2), blanks=r.randint(0, 2))
    summary_row = r.choice([1, 1, 3])
    cases = []
    for _ in range(3):
        absent = r.choice(labels)
        cats = [r.choice([c for c in labels if c != absent]) for _ in range(n_rows)]
        amounts = [money(r, 5, 900) for _ in range(n_rows)]
        states = [r.choice(STATUS[status]) for _ in range(n_rows)]
        dates = [f"2024-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}" for _ in range(n_rows)]
        sheets: Sheets = {}
        shown = [_maybe_text(r, a, mixed) for a in amounts]
        sheets[data], _ = layout.render(r, {"Date": dates, crit: cats, amount: shown, status: states})
        grid: list[list[Any]] = []
        if summary_row > 1:
            put(grid, 1, 1, f"{params['agg'].title()} by {crit}")
        put(grid, summary_row, 1, crit)
        put(grid, summary_row, 2, out)
        expected = {}
        for i, label in enumerate(labels):
            put(grid, summary_row + 1 + i, 1, label)
            values = [a for c, a, s in zip(cats, amounts, states, strict=True)
                      if c == label and (cond == "0" or s == params["status_value"])]  # fmt: skip
            expected[cell_key(summary, f"B{summary_row + 1 + i}")] = _aggregate(agg, values)
        sheets[summary] = grid
        cases.append(Case(expected, input_sheets=sheets))
    target = f"{quote_sheet(summary)}!B{summary_row + 1}:B{summary_row + len(labels)}"
    return Draw(params, target, tuple(cases))


# ---------------------------------------------------------------- pivot-style summary (SUMIFS over two dimensions)

PIVOT_TEMPLATES = (
    Template('In sheet "{summary}", fill the table with the total "{value}" from sheet "{data}" for each "{row_dim}" '
             '(row labels, left of the table) and "{col_dim}" (column labels, above it). Write 0 where there is no '
             "data.", {"total": "0"}),
    Template('Make a pivot-style summary on "{summary}": the sum of "{value}" by "{row_dim}" (rows) and "{col_dim}" '
             '(columns), taken from sheet "{data}"; empty combinations are 0.', {"total": "0"}),
    Template('In sheet "{summary}", fill the table with the total "{value}" from sheet "{data}" for each "{row_dim}" '
             '(row labels, left of the table) and "{col_dim}" (column labels, above it). Write 0 where there is no '
             'data. The last column, "Total", is the total of the row.', {"total": "1"}),
    Template('Make a pivot-style summary on "{summary}": the sum of "{value}" by "{row_dim}" (rows) and "{col_dim}" '
             '(columns), taken from sheet "{data}"; empty combinations are 0, and the last column, "Total", sums '
             "the row.", {"total": "1"}),
)  # fmt: skip


def draw_pivot(r: random.Random) -> Draw:
    row_dim = pick(r, ["Region", "Store", "Sales Rep", "Department"])
    col_dim = pick(r, ["Quarter", "Product", "Channel"])
    value = pick(r, ["Units", "Sales", "Qty", "Amount"])
    data = pick(r, MAIN_SHEETS)
    summary = pick(r, SUMMARY_SHEETS, avoid={data})
    total = r.choice(["0", "1"])
    params = {"data": data, "summary": summary, "row_dim": row_dim, "col_dim": col_dim, "value": value,
              "total": total}  # fmt: skip
    n_labels = r.randint(3, 5)
    row_labels = _names(r, n_labels) if row_dim == "Sales Rep" else r.sample(CATEGORIES[row_dim], n_labels)
    col_labels = r.sample(CATEGORIES[col_dim], min(len(CATEGORIES[col_dim]), r.randint(3, 4)))
    if col_dim == "Quarter":
        col_labels.sort()
    heads = col_labels + (["Total"] if total == "1" else [])
    n_rows = r.randint(14, 26)
    layout = TableLayout.draw(r, [row_dim, col_dim, value], distractors=r.randint(0, 2), blanks=r.randint(0, 2))
    top, left = r.choice([(1, 1), (3, 1), (2, 2)])
    money_values = value in ("Sales", "Amount")
    cases = []
    for _ in range(3):
        rows = [(r.choice(row_labels), r.choice(col_labels)) for _ in range(n_rows)]
        values = [money(r, 10, 500) if money_values else r.randint(1, 60) for _ in range(n_rows)]
        sheets: Sheets = {}
        columns: dict[str, list[Any]] = {row_dim: [a for a, _ in rows], col_dim: [b for _, b in rows], value: values}
        sheets[data], _ = layout.render(r, columns)
        grid: list[list[Any]] = []
        if top > 1:
            put(grid, 1, 1, f"{value} by {row_dim} and {col_dim}")
        put(grid, top, left, row_dim)
        expected = {}
        for j, head in enumerate(heads):
            put(grid, top, left + 1 + j, head)
        for i, label in enumerate(row_labels):
            put(grid, top + 1 + i, left, label)
            sums = {c: sum(v for (a, b), v in zip(rows, values, strict=True) if a == label and b == c)
                    for c in col_labels}  # fmt: skip
            for j, head in enumerate(heads):
                v = sum(sums.values()) if head == "Total" else sums[head]
                expected[cell_key(summary, f"{col_letter(left + 1 + j)}{top + 1 + i}")] = round(v, 2)
        sheets[summary] = grid
        cases.append(Case(expected, input_sheets=sheets))
    first, last = f"{col_letter(left + 1)}{top + 1}", f"{col_letter(left + len(heads))}{top + len(row_labels)}"
    target = f"{quote_sheet(summary)}!{first}:{last}"
    return Draw(params, target, tuple(cases))


FAMILIES = (
    Family("lookup", LOOKUP_TEMPLATES, draw_lookup, "fill a column by looking keys up in another sheet"),
    Family("cond_agg", AGG_TEMPLATES, draw_cond_agg, "SUMIF/COUNTIFS/AVERAGEIF-style totals per category"),
    Family("pivot", PIVOT_TEMPLATES, draw_pivot, "a two-dimensional sum table, optionally with row totals"),
)
