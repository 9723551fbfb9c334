"""The `evoarena` Typer app: every command and command group registered here, in the order `--help` lists them."""

from __future__ import annotations

import typer

from evoarena.cli.clr import clr_app
from evoarena.cli.common import summary
from evoarena.cli.curve import curve
from evoarena.cli.export import checkout, export_command
from evoarena.cli.listing import list_command
from evoarena.cli.plan import plan
from evoarena.cli.probe import probe_roles
from evoarena.cli.results import list_runs, report, show_run
from evoarena.cli.run import run
from evoarena.cli.serve import serve
from evoarena.cli.study import study_app
from evoarena.cli.trace import calls_command, trace
from evoarena.cli.transfer import transfer
from evoarena.cli.versions import diff, rollback_cmd, versions
from evoarena.cli.view import view

app = typer.Typer(add_completion=False, no_args_is_help=True, help="evoarena: evolve and compare agent harnesses.")

for name, command in (
    ("run", run),
    ("plan", plan),
    ("transfer", transfer),
    ("curve", curve),
    ("report", report),
    ("show", show_run),
    ("versions", versions),
    ("diff", diff),
    ("checkout", checkout),
    ("rollback", rollback_cmd),
    ("ls", list_runs),
    ("list", list_command),
    ("probe-roles", probe_roles),
    ("trace", trace),
    ("serve", serve),
    ("view", view),
    ("export", export_command),
    ("calls", calls_command),
):
    app.command(name=name, short_help=summary(command.__doc__))(command)
app.add_typer(clr_app, name="clr")
app.add_typer(study_app, name="study")
