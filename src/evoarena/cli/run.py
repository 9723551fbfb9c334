"""The `evoarena` command line: run, report, show, versions, diff, calls, checkout, rollback, ls (and `clr …`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from evoarena.cli.banner import print_banner, print_roles
from evoarena.cli.clr import clr_app
from evoarena.cli.common import JsonOpt, RunDirArg, emit_json, err, fail, open_run, out, resolve_cell
from evoarena.cli.export import register as register_export
from evoarena.cli.listing import register as register_list
from evoarena.cli.probe import probe_warnings
from evoarena.cli.probe import register as register_probe
from evoarena.cli.serve import register as register_serve
from evoarena.cli.study import register as register_study
from evoarena.cli.trace import calls_command
from evoarena.cli.trace import register as register_trace
from evoarena.cli.view import register as register_view
from evoarena.harness import diff_trees, lineage, load_tree, resolve_version, rollback
from evoarena.spec import ExecutorSpec, ExperimentSpec, SpecError, load_spec
from evoarena.store import DB_NAME, RunStore

if TYPE_CHECKING:
    pass

app = typer.Typer(add_completion=False, no_args_is_help=True, help="evoarena: evolve and compare agent harnesses.")


@app.command()
def run(
    spec_path: Annotated[Path, typer.Argument(help="Experiment spec (YAML).")],
    model: Annotated[str | None, typer.Option(help="Map every role to this model (e.g. scripted, embedded).")] = None,
    run_dir: Annotated[Path | None, typer.Option(help="Where to write the run (default runs/<name>-<hash>).")] = None,
    seeds: Annotated[str | None, typer.Option(help="Comma-separated seeds, overriding the spec's.")] = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="KEY=VALUE set in the spec before it is read (repeatable): a dotted path, e.g. "
        "benchmark.params.seed=1 or methods.2.params.beta=0; the value is YAML; part of the spec and its hash.",
    )] = None,
    parallel: Annotated[int, typer.Option(
        help="Cells to run at once, 1 to 1024 (at least; --concurrency runs more).")] = 1,
    concurrency: Annotated[int | None, typer.Option(
        help="Work and model calls in flight at once, 1 to 1024: cells, episodes, a step's rollouts and asks, "
        "val/test grading (default: the spec's protocol.concurrency, 1). The results do not depend on it.")] = None,
    executor: Annotated[str | None, typer.Option(
        help="Where cells run: `local`, or `ray` / `ray:ADDRESS` (ADDRESS: auto, local, host:port, ray://host:port) "
        "for Ray tasks on a cluster (default: the spec's executor). The results do not depend on it.")] = None,
    no_probe: Annotated[bool, typer.Option("--no-probe", help="Skip the role probes before the run.")] = False,
    probe_threshold: Annotated[float, typer.Option(
        help="Warn when a role's usable probe share (0 to 1) is below.")] = 0.5,
    certified: Annotated[bool, typer.Option(
        "--certified", help="Run each cell's method in a process of its own under bubblewrap (protocol.isolation: "
        "process), which never holds the test split, the grader's data, the run database or the response cache; "
        "refuses to start where bubblewrap does not work, unless the spec asks for a weaker "
        "protocol.method_confinement (docs/security.md).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Run (or resume) an experiment. Re-running the same command resumes and makes no repeated calls. The role
    probes run first (`evoarena probe-roles`; cached, kept in the run store); a role below the threshold warns."""
    from evoarena.cli.common import check_range
    from evoarena.protocol.progress import CellProgress
    from evoarena.protocol.runner import RunDirConflict, default_run_dir, plan_cells, run_experiment
    from evoarena.protocol.validate import validate_run

    check_range("--parallel", parallel, 1, 1024)
    check_range("--concurrency", concurrency, 1, 1024)
    check_range("--probe-threshold", probe_threshold, 0, 1)
    try:
        spec = load_spec(spec_path, set_ or ())
        if model:
            spec = spec.with_model(model)
        if seeds:
            spec = spec.with_seeds(_seeds(seeds))
        if certified:
            spec = spec.model_copy(update={"protocol": spec.protocol.model_copy(update={"isolation": "process"})})
        if executor:
            spec = spec.model_copy(update={"executor": _executor(spec, executor)})
        resolved = validate_run(spec, (spec_path.resolve().parent,))
    except (SpecError, ValueError) as e:
        fail(str(e))
        return
    target = run_dir or default_run_dir(spec)
    evidence = spec.derived_evidence()
    if not as_json:
        print_banner(spec, target, evidence)
        print_roles(spec, resolved)
    plans = plan_cells(spec)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=as_json,
    ) as bar:
        order = [p.cell for p in plans]
        tasks: dict[str, Any] = {}

        def progress(p: CellProgress) -> None:
            # bars appear when the cells start, so an error from building the benchmark prints alone; they count
            # tasks (practice steps, val and test tasks), with the phase's running score, calls and tokens
            for c in order[: order.index(p.cell) + 1] if p.cell not in tasks else ():
                tasks.setdefault(c, bar.add_task(c, total=None, info=""))
            score = f"score {p.score:.2f} ({p.graded})" if p.graded else ""
            info = f"{p.phase:<8} {score:<18} {p.calls} calls {p.tokens / 1000:.1f}k tok"
            bar.update(tasks[p.cell], completed=p.done, total=p.total, info=info)

        try:
            results = run_experiment(spec, target, progress=progress, cells_in_parallel=parallel,
                                     concurrency=concurrency, search=(spec_path.resolve().parent,), probe=not no_probe,
                                     probe_threshold=probe_threshold,
                                     on_probes=None if as_json else _probe_warnings)
        except (RunDirConflict, SpecError, ValueError, RuntimeError) as e:
            fail(str(e))
            return
    if as_json:
        emit_json({"run_dir": str(target), **results})
    else:
        _print_results(results)
        out.print(f"wrote {target / 'results.json'} and {target / 'report.html'}")


def _probe_warnings(summaries: list[Any], threshold: float) -> None:
    """Before the cells start: each role × method whose probes fell below the threshold, in one line."""
    probe_warnings([s.row(threshold) for s in summaries])


def _executor(spec: ExperimentSpec, value: str) -> ExecutorSpec:
    """`--executor local | ray | ray:ADDRESS` over the spec's executor."""
    kind, _, address = value.partition(":")
    if kind not in ("local", "ray") or (kind == "local" and address):
        raise SpecError(f"--executor: expected local, ray or ray:ADDRESS, got {value!r}")
    update: dict[str, Any] = {"kind": kind, **({"address": address} if address else {})}
    return spec.executor.model_copy(update=update)


def _seeds(text: str) -> list[int]:
    try:
        return [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise SpecError(f"--seeds: expected comma-separated integers, got {text!r}") from None


def _print_results(results: dict[str, Any]) -> None:
    table = Table(title=f"test accuracy (evidence: {results.get('evidence')})")
    for col in ("condition", "model", "test acc", "95% CI", "n", "errors"):
        table.add_column(col)
    for c in results.get("conditions", []):
        test = c.get("test") or {}
        mean, lo, hi = test.get("mean"), test.get("ci_low"), test.get("ci_high")
        table.add_row(
            str(c.get("condition")),
            str(c.get("model")),
            "-" if mean is None else f"{mean:.3f}",
            "-" if lo is None else f"[{lo:.3f}, {hi:.3f}]",
            str(test.get("n_graded", 0)),
            str(test.get("n_errors", 0)),
        )
    out.print(table)
    for v in results.get("versus_baseline", []):  # spec order, each against the spec's first condition
        if v["condition"] == v["baseline"]:
            out.print(f"{v['condition']} ({v['model']}): {v['mean']:.3f}   baseline")
        elif v["n_paired"]:
            out.print(f"{v['condition']} ({v['model']}): {v['mean']:.3f}   vs {v['baseline']}: {v['diff']:+.3f} "
                      f"[{v['ci_low']:+.3f}, {v['ci_high']:+.3f}] ({v['n_paired']} paired tasks)", soft_wrap=True)
    by_role = results.get("calls", {}).get("by_role", {})
    out.print(_role_table("model calls by role (cached calls included and shown)", sorted(by_role.items())))


def _role_table(title: str, rows: list[tuple[str, dict[str, Any]]]) -> Table:
    """Calls, cached calls, errors, tokens and cost per role (from results.json or straight from the ledger)."""
    table = Table(title=title)
    for col in ("role", "calls", "cached", "errors", "input tokens", "output tokens", "cost $"):
        table.add_column(col)
    for role, r in rows:
        table.add_row(
            role,
            str(r["calls"]),
            str(r["cached_calls"]),
            str(r["errors"]),
            str(r["input_tokens"]),
            str(r["output_tokens"]),
            f"{r['cost_usd'] or 0:.4f}",
        )
    return table


@app.command()
def report(run_dir: RunDirArg, as_json: JsonOpt = False) -> None:
    """Rebuild results.json and report.html from the run store."""
    from evoarena.protocol.reporting import rebuild_report

    results = rebuild_report(open_run(run_dir))
    if as_json:
        emit_json(results)
    else:
        _print_results(results)
        out.print(f"wrote {run_dir / 'results.json'} and {run_dir / 'report.html'}")


@app.command()
def show(run_dir: RunDirArg, as_json: JsonOpt = False) -> None:
    """The run: spec, evidence, each cell's scores and selected version, and call totals per role."""
    from dataclasses import asdict

    from evoarena.store.calls import totals_by_role
    from evoarena.store.scores import cell_scores

    store = open_run(run_dir)
    run_row = store.run() or {}
    calls = [asdict(r) for r in totals_by_role(store)]
    scores = cell_scores(store)
    data: dict[str, Any] = {
        "run": {k: v for k, v in run_row.items() if k != "spec_json"},
        "spec": json.loads(run_row["spec_json"]) if run_row else None,
        "cells": store.cells(),
        "scores": [asdict(s) for s in scores],
        "calls_by_role": calls,
    }
    if as_json:
        emit_json(data)
        return
    out.print(
        f"[bold]{run_row.get('name')}[/] status={run_row.get('status')} evidence={run_row.get('evidence')} "
        f"isolation={run_row.get('isolation')} code={run_row.get('code_version')}"
    )
    t = Table(title="cells (test: the deployed version; val: its selection score)")
    t.add_column("cell", no_wrap=True)
    for col in ("status", "version", "test mean", "test pass", "n", "errors", "val mean"):
        t.add_column(col, no_wrap=True)
    for s in scores:
        t.add_row(s.cell, s.status, (s.version or "(curriculum)")[:12], _num(s.test.mean), _num(s.test.pass_rate),
                  str(s.test.n_graded), str(s.test.n_errors), _num(s.val.mean))
    out.print(t)
    out.print(_role_table("model calls by role", [(r["role"], r) for r in calls]))


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


@app.command()
def versions(run_dir: RunDirArg,
             cell: Annotated[str | None, typer.Option(help="A cell, by name or unique prefix.")] = None,
             as_json: JsonOpt = False) -> None:
    """Harness versions of every cell (or one) as a tree: each version with the scores of the attempts made with it
    (practice, rollouts, val, test), its clade's val mean where it has children, the selected version starred."""
    from dataclasses import asdict

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
                        "cost": asdict(costs[str(v["id"])]) if str(v["id"]) in costs else None}
                       for v in lineage(store, c)]
        emit_json(data)
        return
    row = queries.run(store)
    policies = parent_policies((row.spec if row else None) or {})
    for c in cells:
        out.print(f"[bold]{c}[/]")
        out.print(cell_tree(store, c, rows[c]["selected_version"], policies.get(rows[c]["condition"])),
                  markup=False, highlight=False, soft_wrap=True)


@app.command()
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


@app.command()
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


@app.command(name="rollback")
def rollback_cmd(run_dir: RunDirArg, cell: str, version: str) -> None:
    """Put an earlier version back into a cell's working harness (recorded as an event)."""
    store = open_run(run_dir)
    try:
        vid = rollback(store, cell, version)
    except KeyError as e:
        fail(str(e.args[0]))
        return
    out.print(f"{cell}: rolled back to {vid[:12]}")


@app.command(name="ls")
def list_runs(root: Annotated[Path, typer.Argument()] = Path("runs"), as_json: JsonOpt = False) -> None:
    """Run directories under ROOT."""
    rows = []
    for db in sorted(root.glob(f"*/{DB_NAME}")):
        run_row = RunStore(db.parent).run() or {}
        rows.append(
            {
                "run_dir": str(db.parent),
                "name": run_row.get("name"),
                "status": run_row.get("status"),
                "evidence": run_row.get("evidence"),
                "started_at": run_row.get("started_at"),
            }
        )
    if as_json:
        emit_json(rows)
        return
    t = Table(title=str(root))
    for col in ("run_dir", "name", "status", "evidence", "started_at"):
        t.add_column(col)
    for r in rows:
        t.add_row(*(str(r[k]) for k in ("run_dir", "name", "status", "evidence", "started_at")))
    out.print(t)


app.add_typer(clr_app, name="clr")

register_list(app)
register_probe(app)
register_study(app)
register_trace(app)
register_serve(app)
register_view(app)
register_export(app)
app.command(name="calls")(calls_command)

