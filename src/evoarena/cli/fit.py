"""Tables that fit the terminal: which columns fit is decided here, once for every command. Key columns always show;
free-text columns fold onto more lines; when the table is still too wide, secondary columns are dropped (the highest
`drop` first) and one dim line names them and `--wide`, which shows every column at its full width."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import typer
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from evoarena.cli.common import out

WideOpt = Annotated[bool, typer.Option("--wide", help="Every column at full width (default: the columns that fit "
                                                      "the terminal, 80 when piped; a line names those left out).")]

FOLD_MIN = 16
"""The narrowest a free-text column is folded to before secondary columns are dropped."""


@dataclass(frozen=True)
class Col:
    """A column: `drop` 0 is a key column (always shown), higher is dropped sooner; `fold` for free text."""

    name: str
    drop: int = 0
    fold: bool = False
    justify: Literal["left", "right"] = "left"
    fold_min: int = FOLD_MIN  # a free-text column: the narrowest it folds to before others are dropped


@dataclass
class Fitted:
    """The table built from the columns that fit, the names of those left out, and the width it needs."""

    table: Table
    hidden: list[str] = field(default_factory=list)
    width: int = 0


def _natural(col: Col, values: Sequence[str]) -> int:
    """The width a column takes unfolded (a free-text column's header may fold at its spaces)."""
    header = max((cell_len(w) for w in col.name.split()), default=0) if col.fold else cell_len(col.name)
    return max([header, *(cell_len(v) for v in values)])


def fitted(cols: Sequence[Col], rows: Sequence[Sequence[str]], *, title: str | None = None, wide: bool = False,
           width: int | None = None, styles: Sequence[str | None] | None = None, edge: bool = True,
           **table: Any) -> Fitted:
    """A rich Table of `rows` with the columns of `cols` that fit `width` (the console's by default); with `wide`,
    all of them. `edge` False: no outer border (a borderless table's chrome is smaller)."""
    width = width or out.width
    natural = [_natural(c, [str(r[i]) for r in rows]) for i, c in enumerate(cols)]
    need = [min(n, c.fold_min) if c.fold else n for c, n in zip(cols, natural, strict=True)]
    pad, border = (3, 1) if edge else (3, -3)

    def size(kept: list[int], widths: list[int]) -> int:
        return sum(widths[i] for i in kept) + pad * len(kept) + border

    kept = list(range(len(cols)))
    while not wide and size(kept, need) > width:
        droppable = [i for i in kept if cols[i].drop > 0]
        if not droppable:
            break
        kept.remove(max(droppable, key=lambda i: (cols[i].drop, i)))
    t = Table(title=title, show_edge=edge, **table)
    for i in kept:
        c = cols[i]
        t.add_column(c.name, justify=c.justify, no_wrap=not c.fold and not wide,
                     overflow="fold" if c.fold else "ellipsis", min_width=None if c.fold else natural[i])
    for n, r in enumerate(rows):
        t.add_row(*(str(r[i]) for i in kept), style=styles[n] if styles else None)
    return Fitted(t, [cols[i].name for i in range(len(cols)) if i not in kept], size(kept, natural))


def show(f: Fitted, wide: bool = False) -> None:
    """Print a fitted table (with --wide, as wide as it needs), then the line naming the columns left out."""
    if wide and f.width > out.width:
        Console(width=f.width, force_terminal=out.is_terminal, no_color=out.no_color).print(f.table)
    else:
        out.print(f.table)
    if f.hidden:
        out.print(f"({', '.join(f.hidden)} hidden to fit {out.width} columns: --wide shows all)", style="dim",
                  highlight=False)
