"""`evoarena export` (a harness version of a run as the solver's prompt, as its files, or as an Agent Skill) and
`evoarena checkout` (a version's files, as stored)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evoarena.cli.common import RunDirArg, fail, open_run, out
from evoarena.harness import load_tree, resolve_version


def export_command(
    run_dir: RunDirArg,
    dest: Annotated[Path, typer.Argument(help="Directory to write (absent or empty unless --force).")],
    as_: Annotated[str, typer.Option("--as", help="prompt (what the solver is shown, with a {task} slot), files "
                                                  "(the harness tree) or skill (an Agent Skills folder).")],
    cell: Annotated[str | None, typer.Option(help="The cell, a unique prefix of one, or `best`: the condition with "
                                                  "the best val (ties: the one listed first in the spec) and its best "
                                                  "seed (default: the run's only cell).")] = None,
    version: Annotated[str, typer.Option(help="selected (what test graded), final, or a version id/prefix.")]
    = "selected",
    force: Annotated[bool, typer.Option(help="Write over files already in DEST (nothing is removed).")] = False,
) -> None:
    """Export what evolved: one harness version as a prompt, as files, or as an Agent Skill."""
    from evoarena.protocol.export.bundle import ExportError, export, summary

    try:
        source = export(run_dir, dest, as_, cell=cell, version=version, force=force, search=(Path.cwd(),))
    except ExportError as e:
        fail(str(e))
        return
    out.print(f"exported {summary(source)} as {as_} into {dest}", soft_wrap=True)


def checkout(run_dir: RunDirArg, version: str, dest: Path) -> None:
    """Write a harness version's files into DEST (which must be empty or absent)."""
    from evoarena.harness import HarnessPathError, HarnessWorkspace, check_tree

    store = open_run(run_dir)
    if dest.exists() and any(dest.iterdir()):
        fail(f"{dest} is not empty")
    try:
        vid = resolve_version(store, version)
        tree = load_tree(store, vid)
        check_tree(tree, None)  # a version stored before names were checked: refused before anything is written
    except KeyError as e:
        fail(str(e.args[0]))
        return
    except HarnessPathError as e:
        fail(f"version {vid[:12]}: {e}")
        return
    ws = HarnessWorkspace(dest)
    for rel, text in tree.items():
        ws.write(rel, text)
    out.print(f"checked out {vid[:12]} into {dest}")
