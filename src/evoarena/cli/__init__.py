"""The `evoarena` command line (Typer): one module per command group, the app assembled in `run`."""

from __future__ import annotations

from evoarena.cli.run import app

__all__ = ["app"]
