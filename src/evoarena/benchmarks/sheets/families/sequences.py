"""Families whose answer depends on the rows above: filling blanks down, a sequential scan that updates its
reference value (the seed's case study), and running totals that restart per group."""

from __future__ import annotations

import datetime
import random
from typing import Any

from evoarena.benchmarks.sheets.core import Case
from evoarena.benchmarks.sheets.families.base import Draw, Family, Template, column_cells, column_draw, money, pick
from evoarena.benchmarks.sheets.families.lookups import CATEGORIES, MAIN_SHEETS
from evoarena.benchmarks.sheets.layout import FIRST, LAST, TableLayout

GROUP_LABELS: dict[str, list[Any]] = {
    "Department": CATEGORIES["Department"],
    "Project": ["Apollo", "Borealis", "Cedar", "Delta", "Ember", "Falcon", "Granite"],
    "Category": ["Office", "Travel", "Software", "Catering", "Training", "Hardware"],
    "Store": [101, 102, 107, 115, 120, 133, 140],  # numbers: the group label need not be text
    "Team": ["Team A", "Team B", "Team C", "Team D", "Team E"],
}
ITEMS = {"Employee": "name", "Task": "task", "Item": "item", "Member": "name"}


def _partition(r: random.Random, total: int, parts: int, least: int) -> list[int]:
    sizes = [least] * parts
    for _ in range(total - least * parts):
        sizes[r.randrange(parts)] += 1
    return sizes


def _item(r: random.Random, kind: str) -> str:
    if kind == "name":
        return f"{r.choice(FIRST)} {r.choice(LAST)}"
    if kind == "task":
        return f"{r.choice(['Review', 'Draft', 'Test', 'Ship', 'Plan', 'Audit'])} {r.choice(['spec', 'report', 'build', 'budget', 'release'])}"  # noqa: E501
    return f"{r.choice(['Chair', 'Desk', 'Lamp', 'Cable', 'Monitor', 'Dock'])} {r.randint(1, 99)}"


# ---------------------------------------------------------------- fill down (labels of merged cells)

FILL_TEMPLATES = (
    Template('In sheet "{sheet}", column "{group}" only shows the value on the first row of each block. Fill every '
             'empty "{group}" cell with the value above it, on each row that has an "{item}"; leave empty rows empty.'),
    Template('The "{group}" column of sheet "{sheet}" was exported from merged cells, so only the first row of each '
             'group has it. Fill it down so every row with an "{item}" shows its "{group}". Rows with no "{item}" stay '
             "empty."),
)  # fmt: skip


def draw_fill_down(r: random.Random) -> Draw:
    group = pick(r, list(GROUP_LABELS))
    item = pick(r, list(ITEMS))
    sheet = pick(r, MAIN_SHEETS)
    other = pick(r, ["Hours", "Qty", "Budget"])
    params = {"sheet": sheet, "group": group, "item": item}
    n_items, seps = r.randint(9, 15), r.randint(0, 2)
    layout = TableLayout.draw(r, [group, item, other], distractors=r.randint(0, 2), fixed_order=True)
    cases = []
    for _ in range(3):
        n_groups = r.randint(max(3, seps + 1), min(5, n_items // 2))
        sizes = _partition(r, n_items, n_groups, 2)
        labels = r.sample(GROUP_LABELS[group], n_groups)
        after = set(r.sample(range(n_groups - 1), seps))
        groups: list[Any] = []
        items: list[Any] = []
        truth: list[Any] = []
        empty: set[int] = set()
        for g, (label, size) in enumerate(zip(labels, sizes, strict=True)):
            for k in range(size):
                groups.append(label if k == 0 else None)
                items.append(_item(r, ITEMS[item]))
                truth.append(label)
            if g in after:
                empty.add(len(groups))
                groups.append(None)
                items.append(None)
                truth.append(None)
        extra = [None if i in empty else r.randint(1, 40) for i in range(len(groups))]
        grid, placed = layout.render(r, {group: groups, item: items, other: extra}, empty=frozenset(empty))
        cases.append(Case(column_cells(sheet, placed, group, truth), input_sheets={sheet: grid}))
    return column_draw(params, layout, sheet, group, n_items + seps, cases)


# ---------------------------------------------------------------- sequential scan with a moving reference value

SCAN_TEMPLATES = (
    Template('In sheet "{sheet}", go down the rows in order and write "{yes}" in "{out}" when the row\'s "{value}" is '
             'at least {pct}% {dir} the reference value, otherwise "{no}". The reference starts as the first row\'s '
             '"{value}" (the first row gets "{no}"); each time a row gets "{yes}", its "{value}" becomes the new '
             'reference. Rows without a "{value}" stay empty.', {"blank_no": "0"}),
    Template('Flag moves in sheet "{sheet}": going down the rows, set "{out}" to "{yes}" if "{value}" is {pct}% or '
             'more {dir} the current reference, else "{no}". The first row\'s "{value}" is the starting reference '
             '(that row is "{no}"), and the reference is updated to the flagged row\'s "{value}" every time the '
             'condition holds. Skip rows with no "{value}" (leave them empty).', {"blank_no": "0"}),
    Template('In sheet "{sheet}", go down the rows in order and write "{yes}" in "{out}" when the row\'s "{value}" is '
             "at least {pct}% {dir} the reference value; otherwise leave it empty. The reference starts as the first "
             'row\'s "{value}" (the first row stays empty); each time a row gets "{yes}", its "{value}" becomes the '
             'new reference. Rows without a "{value}" stay empty.', {"blank_no": "1"}),
)  # fmt: skip

SCAN_LABELS = [("Yes", "No"), ("Alert", "OK"), ("BUY", "HOLD"), ("1", "0"), ("Breakout", "-")]


def scan_flags(values: list[float | None], pct: float, above: bool, *, update: bool = True) -> list[bool | None]:
    """The reference rule: True where a row is flagged, False where not, None for rows without a value (and
    for the first valued row, which only sets the reference). `update=False` is the classic mistake."""
    out: list[bool | None] = []
    ref: float | None = None
    for v in values:
        if v is None:
            out.append(None)
        elif ref is None:
            ref = v
            out.append(None)
        else:
            hit = v >= ref * (1 + pct / 100) if above else v <= ref * (1 - pct / 100)
            out.append(hit)
            if hit and update:
                ref = v
    return out


def _scan_values(r: random.Random, n: int, pct: float, above: bool, gaps: int) -> list[float | None]:
    """A seeded walk whose correct flags differ from the never-updated ones and that has no near-ties."""
    for _ in range(1000):
        v = r.uniform(40, 200)
        values: list[float | None] = []
        for _ in range(n):
            values.append(round(v, 2))
            step = r.uniform(-0.4, 0.9) * pct / 100
            v *= (1 + step) if above else (1 - step)
        for i in r.sample(range(1, n), gaps):
            values[i] = None
        right = scan_flags(values, pct, above)
        if right == scan_flags(values, pct, above, update=False) or sum(bool(x) for x in right) < 2:
            continue
        if _margin(values, pct, above) >= 0.01:
            return values
    raise RuntimeError("could not draw a sequential-scan case")


def _margin(values: list[float | None], pct: float, above: bool) -> float:
    ref: float | None = None
    gap = float("inf")
    for v in values:
        if v is None:
            continue
        if ref is None:
            ref = v
            continue
        threshold = ref * (1 + pct / 100) if above else ref * (1 - pct / 100)
        gap = min(gap, abs(v - threshold))
        if (v >= threshold) if above else (v <= threshold):
            ref = v
    return gap


def draw_seq_scan(r: random.Random) -> Draw:
    sheet = pick(r, MAIN_SHEETS)
    date = pick(r, ["Date", "Trade Date", "Reading Date", "Day"])
    value = pick(r, ["Price", "Close", "Reading", "Level"])
    out = pick(r, ["Flag", "Signal", "Alert", "Breakout"])
    yes, no = r.choice(SCAN_LABELS)
    blank_no = "1" if r.random() < 0.3 else "0"
    pct, above = r.choice([5, 10, 15, 20]), r.random() < 0.6
    params = {"sheet": sheet, "date": date, "value": value, "out": out, "yes": yes, "no": "" if blank_no == "1" else no,
              "pct": str(pct), "dir": "above" if above else "below", "blank_no": blank_no}  # fmt: skip
    n_rows, gaps = r.randint(10, 16), r.randint(0, 1)
    layout = TableLayout.draw(r, [date, value, out], distractors=r.randint(0, 2), fixed_order=True)
    cases = []
    for _ in range(3):
        values = _scan_values(r, n_rows, pct, above, gaps)
        start = datetime.datetime(2023, 1, 2) + datetime.timedelta(days=r.randint(0, 600))
        step = r.choice([1, 7])
        dates = [start + datetime.timedelta(days=step * i) for i in range(n_rows)]
        grid, placed = layout.render(r, {date: dates, value: values, out: [None] * n_rows})
        flags = scan_flags(values, pct, above)
        first = next(i for i, v in enumerate(values) if v is not None)
        labels = [yes if flag else (params["no"] or None) if (flag is False or i == first) else None
                  for i, flag in enumerate(flags)]  # fmt: skip
        cases.append(Case(column_cells(sheet, placed, out, labels), input_sheets={sheet: grid}))
    return column_draw(params, layout, sheet, out, n_rows, cases)


# ---------------------------------------------------------------- running totals (restarting per group)

RUN_TEMPLATES = (
    Template('In sheet "{sheet}", write in "{out}" the running total of "{amount}" within each "{group}": each row '
             'adds its "{amount}" to the total of the rows above it with the same "{group}", starting again from 0 '
             'whenever "{group}" changes. Empty amounts count as 0.{note}', {"reset": "1"}),
    Template('Compute a running balance in column "{out}" of sheet "{sheet}" that restarts at every new "{group}" '
             '(rows are sorted by "{group}"): the sum of "{amount}" from the group\'s first row down to the current '
             "row. Treat empty amounts as 0.{note}", {"reset": "1"}),
    Template('In sheet "{sheet}", fill "{out}" with the cumulative sum of "{amount}" from the first data row down to '
             "each row (one running total over the whole column). Empty amounts count as 0.{note}", {"reset": "0"}),
)  # fmt: skip


def draw_running_total(r: random.Random) -> Draw:
    sheet = pick(r, MAIN_SHEETS)
    group = pick(r, ["Account", "Customer", "Project", "Card"])
    amount, out = pick(r, ["Amount", "Movement", "Change", "Debit/Credit"]), pick(r, ["Running Total", "Balance",
                                                                                     "Cumulative", "Running Balance"])
    reset, mixed = r.choice(["0", "1", "1"]), r.random() < 0.5
    params = {"sheet": sheet, "group": group, "amount": amount, "out": out, "reset": reset,
              "note": " Some amounts are stored as text; use their numeric value." if mixed else ""}  # fmt: skip
    n_rows = r.randint(10, 16)
    layout = TableLayout.draw(r, [group, "Date", amount, out], distractors=r.randint(0, 2), fixed_order=True)
    cases = []
    for _ in range(3):
        n_groups = r.randint(3, 4)
        labels = sorted(f"{group[:3].upper()}-{n}" for n in r.sample(range(100, 999), n_groups))
        groups = [g for g, k in zip(labels, _partition(r, n_rows, n_groups, 2), strict=True) for _ in range(k)]
        amounts: list[float | None] = [None if r.random() < 0.1 else money(r, -300, 500) for _ in range(n_rows)]
        shown: list[Any] = [f"{a:.2f}" if mixed and a is not None and r.random() < 0.25 else a for a in amounts]
        dates = [f"2024-{1 + i // 28:02d}-{1 + i % 28:02d}" for i in range(n_rows)]
        grid, placed = layout.render(r, {group: groups, "Date": dates, amount: shown, out: [None] * n_rows})
        totals: list[float] = []
        total, previous = 0.0, None
        for g, a in zip(groups, amounts, strict=True):
            if reset == "1" and g != previous:
                total = 0.0
            total += a or 0.0
            previous = g
            totals.append(round(total, 2))
        cases.append(Case(column_cells(sheet, placed, out, totals), input_sheets={sheet: grid}))
    return column_draw(params, layout, sheet, out, n_rows, cases)


FAMILIES = (
    Family("fill_down", FILL_TEMPLATES, draw_fill_down, "fill the blanks left by merged group labels"),
    Family("seq_scan", SCAN_TEMPLATES, draw_seq_scan, "flag rows against a reference that moves on every hit"),
    Family("running_total", RUN_TEMPLATES, draw_running_total, "running totals, optionally restarting per group"),
)
