"""`evoarena export`: a harness version of a run as the solver's prompt, as its files, or as an Agent Skill."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evoarena.cli.common import RunDirArg, fail, out


def export_command(
    run_dir: RunDirArg,
    dest: Annotated[Path, typer.Argument(help="Directory to write (absent or empty unless --force).")],
    as_: Annotated[str, typer.Option("--as", help="prompt (what the solver is shown, with a {task} slot), files "
                                                  "(the harness tree) or skill (an Agent Skills folder).")],
    cell: Annotated[str | None, typer.Option(help="The cell (default: the run's only cell).")] = None,
    version: Annotated[str, typer.Option(help="selected (what test graded), final, or a version id/prefix.")]
    = "selected",
    force: Annotated[bool, typer.Option(help="Write over files already in DEST (nothing is removed).")] = False,
) -> None:
    """Export what evolved: one harness version as a prompt, as files, or as an Agent Skill."""
    from evoarena.protocol.export import ExportError, export, summary

    try:
        source = export(run_dir, dest, as_, cell=cell, version=version, force=force, search=(Path.cwd(),))
    except ExportError as e:
        fail(str(e))
        return
    out.print(f"exported {summary(source)} as {as_} into {dest}", soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command(name="export")(export_command)
