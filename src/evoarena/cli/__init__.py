"""The `evoarena` command line (Typer), one module per command group: `run` (with the lines a run prints at its
start; `live`, its progress), `results` (report, show, ls), `versions` (versions, diff, rollback), `export` (export,
checkout), `trace` (trace, calls), `listing`, `probe`, `serve`, `study`, `view`, `clr`; `common` holds the consoles,
shared options and the one-line error exit; `fit` the tables that fit the terminal; `app` registers them all. The
console script is `evoarena.cli:app`."""

from __future__ import annotations

from evoarena.cli.app import app

__all__ = ["app"]
