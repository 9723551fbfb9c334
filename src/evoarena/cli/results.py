"""`evoarena report`, `show` and `ls`: a run's results and cells, rebuilt from its store or read from it, and the
runs under a folder; the results and calls-by-role tables that `run` prints too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from evoarena.cli.common import JsonOpt, RunDirArg, emit_json, open_run, out
from evoarena.store import DB_NAME, RunStore

if TYPE_CHECKING:
    from evoarena.report.results_record import RunResults


def print_results(results: RunResults) -> None:
    """The test accuracy per condition, each condition against the baseline, the headroom a reference harness shows
    (with each condition's share of it), why each cell tested the version it did (a warning for a final version the
    budget left ungraded), the update roles' reply quality, and the calls by role."""
    table = Table(title=f"test accuracy (evidence: {results.evidence})")
    for col in ("condition", "model", "test acc", "95% CI", "n", "errors"):
        table.add_column(col)
    for c in results.conditions:
        test = c.test
        mean, lo, hi = (test.mean, test.ci_low, test.ci_high) if test else (None, None, None)
        table.add_row(
            c.condition,
            c.model,
            "-" if mean is None else f"{mean:.3f}",
            "-" if lo is None or hi is None else f"[{lo:.3f}, {hi:.3f}]",
            str(test.n_graded if test else 0),
            str(test.n_errors if test else 0),
        )
    out.print(table)
    for v in results.versus_baseline:  # spec order, each against the spec's first condition
        if v.condition == v.baseline:
            out.print(f"{v.condition} ({v.model}): {_num(v.mean)}   baseline")
        elif v.n_paired:
            out.print(f"{v.condition} ({v.model}): {_num(v.mean)}   vs {v.baseline}: {_signed(v.diff)} "
                      f"[{_signed(v.ci_low)}, {_signed(v.ci_high)}] ({v.n_paired} paired tasks{_mde(v.mde)})",
                      soft_wrap=True)
    for h in results.headroom or []:
        shares = ", ".join(f"{s.condition} {_signed(s.diff)}" + ("" if s.share is None else f" ({s.share:.0%} of it)")
                           for s in h.shares)
        out.print(f"headroom ({h.model}): {h.control} − {h.baseline}: {_signed(h.diff)} [{_signed(h.ci_low)}, "
                  f"{_signed(h.ci_high)}] ({h.n_paired} paired tasks{_mde(h.mde)})" + (f"; {shares}" if shares else ""),
                  soft_wrap=True, markup=False)
        if h.note:
            out.print(f"[yellow]warning[/]  headroom ({h.model}): {escape(h.note)}", soft_wrap=True)
    for sel in results.selections:
        out.print(f"selected  {sel.condition} ({sel.model}, seed {sel.seed}): {sel.text}", soft_wrap=True,
                  markup=False)
    for sel in results.selections:
        if sel.warning:
            out.print(f"[yellow]warning[/]  {sel.condition} (seed {sel.seed}): {escape(sel.warning)}", soft_wrap=True)
    if results.update_quality:
        out.print(quality_table(results))
    rows = [(role, s.model_dump()) for role, s in sorted(results.calls.by_role.items())]
    out.print(role_table("model calls by role (cached calls included and shown)", rows))


QUALITY = ("usable", "echo", "duplicate", "repeated", "refused", "malformed")


def quality_table(results: RunResults) -> Table:
    """The update roles' replies during practice and what became of them, per condition × role."""
    table = Table(title="update quality: what the update roles wrote (rejected replies by kind)")
    for col in ("condition", "model", "role", "replies", *QUALITY, "parts"):
        table.add_column(col)
    for q in results.update_quality:
        row = q.model_dump()
        style = "yellow" if q.replies and q.usable < q.replies / 2 else None
        table.add_row(q.condition, q.model, q.role, str(q.replies), *(str(row[k]) for k in (*QUALITY, "parts")),
                      style=style)
    return table


def _mde(value: float | None) -> str:
    """The comparison's MDE after its CI: a difference smaller than it is one these tasks would likely miss."""
    return "" if value is None else f", detects ±{value:.3f} at 80% power"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def role_table(title: str, rows: list[tuple[str, dict[str, Any]]]) -> Table:
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



def report(run_dir: RunDirArg, as_json: JsonOpt = False) -> None:
    """Rebuild results.json and report.html from the run store."""
    from evoarena.protocol.run.reporting import rebuild_report

    results = rebuild_report(open_run(run_dir))
    if as_json:
        emit_json(results.model_dump())
    else:
        print_results(results)
        out.print(f"wrote {run_dir / 'results.json'} and {run_dir / 'report.html'}")


def show(run_dir: RunDirArg, as_json: JsonOpt = False) -> None:
    """The run: spec, evidence, each cell's scores and selected version, and call totals per role."""

    from evoarena.codec import to_plain
    from evoarena.store.calls import totals_by_role
    from evoarena.store.scores import cell_scores

    store = open_run(run_dir)
    run_row = store.run() or {}
    calls = to_plain(totals_by_role(store))
    scores = cell_scores(store)
    data: dict[str, Any] = {
        "run": {k: v for k, v in run_row.items() if k != "spec_json"},
        "spec": json.loads(run_row["spec_json"]) if run_row else None,
        "cells": store.cells(),
        "scores": to_plain(scores),
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
    out.print(role_table("model calls by role", [(r["role"], r) for r in calls]))


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


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

