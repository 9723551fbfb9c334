"""What a task family is: instruction templates (invertible, so a scripted policy can read them back), and a
seeded draw of parameters, target range and three cases with reference values."""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from evoarena.benchmarks.sheets.core import CELL_LEVEL, Case, cell_key, quote_sheet
from evoarena.benchmarks.sheets.layout import Placed, TableLayout


@dataclass(frozen=True)
class Template:
    """An instruction with `{name}` placeholders; `fixed` are parameters this wording implies (a variant)."""

    text: str
    fixed: dict[str, str] = field(default_factory=dict)

    def names(self) -> list[str]:
        return [f for _, f, _, _ in string.Formatter().parse(self.text) if f]

    def render(self, params: dict[str, str]) -> str:
        return self.text.format(**params)

    def program_params(self, params: dict[str, str]) -> dict[str, str]:
        """The parameters this wording states: what a solver (and the reference program) can know."""
        return {k: params[k] for k in sorted({*self.names(), *self.fixed})}

    def match(self, text: str) -> dict[str, str] | None:
        m = _regex(self.text).fullmatch(text.strip())
        return None if m is None else {**m.groupdict(), **self.fixed}


@cache
def _regex(text: str) -> re.Pattern[str]:
    parts: list[str] = []
    seen: set[str] = set()
    for literal, name, _, _ in string.Formatter().parse(text):
        parts.append(re.escape(literal))
        if name:
            parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.*?)")
            seen.add(name)
    return re.compile("".join(parts), re.S)


@dataclass(frozen=True)
class Draw:
    """One drawn task of a family, before it gets its id."""

    params: dict[str, str]
    target: str
    cases: tuple[Case, ...]
    instruction_type: str = CELL_LEVEL


@dataclass(frozen=True)
class Family:
    """A task family: `draw(r)` gives parameters (including variant keys that select templates), the target and
    the cases; `templates` are its wordings; `solution` names its reference program in `solutions/`."""

    name: str
    templates: tuple[Template, ...]
    draw: Callable[[random.Random], Draw]
    summary: str

    def wording(self, r: random.Random, params: dict[str, str]) -> Template:
        """A wording whose variant keys agree with the drawn parameters."""
        fitting = [t for t in self.templates if all(params.get(k) == v for k, v in t.fixed.items())]
        if not fitting:
            raise ValueError(f"family {self.name}: no template fits the variant {params}")
        return r.choice(fitting)


def pick(r: random.Random, options: list[str] | tuple[str, ...], *, avoid: set[str] | None = None) -> str:
    """A seeded choice that avoids values already in use (e.g. a header name taken by another column)."""
    left = [o for o in options if o not in (avoid or set())]
    return r.choice(left)


def money(r: random.Random, low: float, high: float) -> float:
    return round(r.uniform(low, high), 2)


def column_cells(sheet: str, placed: Placed, header: str, values: Sequence[Any]) -> dict[str, Any]:
    """The expected cells of column `header` of a table placed on `sheet`: `values` (one per record) on the
    records' rows, None on the blank rows between them."""
    col = placed.letter(header)
    cells: dict[str, Any] = {
        cell_key(sheet, f"{col}{row}"): None for row in range(placed.header_row + 1, placed.last_row + 1)
    }
    for row, value in zip(placed.rows, values, strict=True):
        cells[cell_key(sheet, f"{col}{row}")] = value
    return cells


def column_draw(
    params: dict[str, str], layout: TableLayout, sheet: str, header: str, n_records: int, cases: Iterable[Case]
) -> Draw:
    """A cell-level draw whose target is column `header` of the table `layout` places on `sheet`: from the row
    below the header down to the table's last row for `n_records` records (blank rows included)."""
    col = layout.letter(header)
    target = f"{quote_sheet(sheet)}!{col}{layout.first_row()}:{col}{layout.last_row(n_records)}"
    return Draw(params, target, tuple(cases))
