"""A run's cell by its name or a unique prefix of it (`evotest` for `evotest__embedded__s0`): the one lookup the CLI
and export share, with its one-line error (did-you-mean over cell and condition names)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evoarena.store.db import RunStore
from evoarena.wording import did_you_mean, listing


class NoSuchCell(LookupError):
    """No cell, or more than one, answers to the name; the message is one line naming the cells."""


def find_cell(store: RunStore, cell: str, also: Sequence[str] = ()) -> dict[str, Any]:
    """The cell row named `cell` exactly, else the one cell whose name starts with it; `also`: other words the caller
    accepts, offered as did-you-mean too."""
    cells = store.cells()
    names = [str(c["cell"]) for c in cells]
    exact = [c for c in cells if c["cell"] == cell] or [c for c in cells if str(c["cell"]).startswith(cell)]
    if not exact:
        close = did_you_mean(cell, [*names, *{str(c["condition"]) for c in cells}, *also])  # a condition is a prefix
        raise NoSuchCell(f"no cell {cell!r} in this run{close} (cells: {listing(names)})")
    if len(exact) != 1:
        raise NoSuchCell(f"{len(exact)} cells match {cell!r} in this run (cells: {listing(names)})")
    return exact[0]
