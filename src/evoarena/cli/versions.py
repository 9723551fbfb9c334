"""`evoarena versions`, `diff` and `rollback`: a run's harness versions as a tree, the diff between two of them, and
an earlier version put back into a cell's working harness."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from evoarena.cli.common import JsonOpt, RunDirArg, emit_json, fail, open_run, out, resolve_cell
from evoarena.harness import diff_trees, lineage, load_tree, resolve_version, rollback


def versions(run_dir: RunDirArg,
             cell: Annotated[str | None, typer.Option(help="A cell, by name or unique prefix.")] = None,
             as_json: JsonOpt = False) -> None:
    """Harness versions of every cell (or one) as a tree: each version with the scores of the attempts made with it
    (practice, rollouts, val, test), its clade's val mean where it has children, the selected version starred."""

    from evoarena.codec import to_plain
    from evoarena.report.lineage_tree import cell_tree, parent_policies
    from evoarena.store import queries
    from evoarena.store.archive import result_matrix, task_scores, version_costs
    from evoarena.store.queries import version_results

    store = open_run(run_dir)
    rows = {str(c["cell"]): c for c in store.cells()}
    cells = [resolve_cell(store, cell)] if cell else list(rows)
    if as_json:
        data = {}
        for c in cells:
            results, matrix = version_results(store, c), result_matrix(store, c)
            costs = version_costs(matrix)
            data[c] = [{**v, "scores": {phase: {"mean": sum(xs) / len(xs), "n": len(xs)}
                                        for phase, xs in results.get(str(v["id"]), {}).items()},
                        "tasks": task_scores(matrix, str(v["id"])),
                        "cost": to_plain(costs[str(v["id"])]) if str(v["id"]) in costs else None}
                       for v in lineage(store, c)]
        emit_json(data)
        return
    row = queries.run(store)
    policies = parent_policies((row.spec if row else None) or {})
    for c in cells:
        out.print(f"[bold]{c}[/]")
        out.print(cell_tree(store, c, rows[c]["selected_version"], policies.get(rows[c]["condition"])),
                  markup=False, highlight=False, soft_wrap=True)


def diff(
    run_dir: RunDirArg, v1: str, v2: str,
    color: Annotated[bool | None, typer.Option("--color/--no-color", help="Colour (default: on a terminal).")] = None,
) -> None:
    """Unified diff between two harness versions (ids or unique prefixes), coloured on a terminal."""
    store = open_run(run_dir)
    try:
        a, b = resolve_version(store, v1), resolve_version(store, v2)
    except KeyError as e:
        fail(str(e.args[0]))
        return
    text = diff_trees(load_tree(store, a), load_tree(store, b), a[:12], b[:12])
    if color is None:
        color = sys.stdout.isatty()
    if color:
        from rich.console import Console
        from rich.syntax import Syntax

        Console(force_terminal=True, soft_wrap=True).print(
            Syntax(text, "diff", theme="ansi_dark", background_color="default"))
    else:
        sys.stdout.write(text)


def rollback_cmd(run_dir: RunDirArg, cell: str, version: str) -> None:
    """Put an earlier version back into a cell's working harness (recorded as an event)."""
    store = open_run(run_dir)
    try:
        vid = rollback(store, cell, version)
    except KeyError as e:
        fail(str(e.args[0]))
        return
    out.print(f"{cell}: rolled back to {vid[:12]}")

