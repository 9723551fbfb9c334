"""`python -m evoarena.cli …`: the `evoarena` command, for a checkout without the console script."""

from __future__ import annotations

from evoarena.cli import app

app()
