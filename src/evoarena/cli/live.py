"""`evoarena run`'s progress: on a terminal, one live row per cell (each cell's row added once, in run order, when
it or a later cell first reports); otherwise one plain log line per cell and phase change, at most one every few
seconds in between (`PlainLog`), so a run's output redirected to a file shows its progress."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column

from evoarena.cli.common import out
from evoarena.protocol.progress import CellProgress
from evoarena.protocol.progress import Progress as OnProgress
from evoarena.protocol.progress_log import PlainLog, calls_text, eta_text, to_stream

WIDE = 110
"""From this many columns a terminal's rows also show a bar, the tokens and the elapsed time."""


NAME = 24
"""A narrow terminal shows at most this much of a cell's name: its start and its end (model and seed)."""


def info(p: CellProgress, wide: bool) -> str:
    """The text after a cell's done/total: phase, the phase's score so far, calls (+ in flight), tokens when wide."""
    score = f"{p.score:.2f} ({p.graded})" if p.graded else "-"
    if not wide:
        return f"{p.phase:<8} {score} {calls_text(p)}"
    return f"{p.phase:<8} {score:<11} {calls_text(p)}  {p.tokens / 1000:.1f}k tok"


def short(cell: str, width: int = NAME) -> str:
    """`cell` cut in the middle to `width` characters, so its model and seed stay visible."""
    if len(cell) <= width:
        return cell
    parts = cell.split("__")
    tail = min(width // 2, len("__".join(parts[-2:])) if len(parts) > 2 else 8)
    return cell[: width - tail - 1] + "…" + cell[-tail:]


class LiveRows:
    """The `Progress` callback behind the live rows: a row per cell, added exactly once."""

    def __init__(self, bar: Progress, cells: Sequence[str], wide: bool) -> None:
        self.bar, self.order, self.wide = bar, list(cells), wide
        self.rows: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __call__(self, p: CellProgress) -> None:
        with self._lock:
            if p.cell not in self.rows:  # this cell's row, after the rows of the cells before it in run order
                upto = self.order.index(p.cell) + 1 if p.cell in self.order else len(self.order)
                for c in [*self.order[:upto], p.cell]:
                    if c not in self.rows:
                        self.rows[c] = self.bar.add_task(c if self.wide else short(c), total=None, info="", eta="")
            self.bar.update(self.rows[p.cell], completed=p.done, total=p.total, info=info(p, self.wide),
                            eta=eta_text(p))


def bar_for(console: Console) -> Progress:
    """The live display: cell, done/total, phase/score/calls, ETA; a bar and elapsed time on a wide terminal."""
    wide = console.width >= WIDE
    name = TextColumn("{task.description}", table_column=Column(no_wrap=False, overflow="ellipsis"))  # it gives way
    columns: list[Any] = [name, *([BarColumn(bar_width=20)] if wide else []),
                          MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
                          *([TimeElapsedColumn()] if wide else []), TextColumn("{task.fields[eta]}")]
    return Progress(*columns, console=console)


@contextmanager
def run_progress(cells: Sequence[str], quiet: bool = False) -> Iterator[OnProgress | None]:
    """The progress callback for a run of `cells`: None when quiet (--json), live rows on a terminal, else plain
    lines on stdout."""
    if quiet:
        yield None
    elif not out.is_terminal:
        yield PlainLog(write=to_stream("stdout"))
    else:
        with bar_for(out) as bar:
            yield LiveRows(bar, cells, out.width >= WIDE)
