"""Console, shared option types and error exit used by every CLI module."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from evoarena.store import RunStore
from evoarena.store.cell_lookup import NoSuchCell, find_cell

out = Console()
err = Console(stderr=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
RunDirArg = Annotated[Path, typer.Argument(help="A run directory (holds run.sqlite).")]


def fail(message: str, code: int = 2) -> NoReturn:
    """One line on stderr (never wrapped, so it greps), then exit with `code`."""
    err.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
    raise typer.Exit(code)


def check_range(option: str, value: float | None, low: float, high: float) -> None:
    """A one-line error (`fail`) unless `value` (when given) is within [low, high]: an option's range, checked by the
    command itself so that the error is one line like every other input error, before anything is written."""
    if value is not None and not low <= value <= high:
        fail(f"{option}: {value:g} is out of range (from {low:g} to {high:g})")


def open_run(run_dir: Path) -> RunStore:
    try:
        return RunStore.open_existing(run_dir)
    except FileNotFoundError as e:
        fail(str(e))
        raise  # unreachable


def resolve_cell(store: RunStore, cell: str) -> str:
    """A cell of the run by its name or a unique prefix of it (`evotest` for `evotest__embedded__s0`)."""
    try:
        return str(find_cell(store, cell)["cell"])
    except NoSuchCell as e:
        fail(str(e))


def summary(doc: str | None) -> str:
    """A command's line in `--help`'s list: its docstring's first sentence, on one line (the whole docstring is the
    command's own `--help`)."""
    text = " ".join((doc or "").split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
