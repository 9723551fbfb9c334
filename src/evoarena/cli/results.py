"""`evoarena report`, `show` and `ls`: a run's results and cells, rebuilt from its store or read from it, and the
runs under a folder; the results and calls-by-role tables that `run` prints too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from evoarena.cli.common import JsonOpt, RunDirArg, emit_json, open_run, out
from evoarena.cli.fit import Col, Fitted, WideOpt, fitted, show
from evoarena.store import DB_NAME, RunStore

if TYPE_CHECKING:
    from evoarena.report.results_record import HeadroomShare, RunResults


def print_results(results: RunResults, wide: bool = False) -> None:
    """The test accuracy per condition, each condition against the baseline, the headroom a reference harness shows
    (with each condition's share of it), why each cell tested the version it did (a warning for a final version the
    budget left ungraded), the update roles' reply quality, and the calls by role."""
    rows = []
    spec_order = {(v.condition, v.model): i for i, v in enumerate(results.versus_baseline)}
    for c in sorted(results.conditions, key=lambda c: spec_order.get((c.condition, c.model), len(spec_order))):
        test = c.test
        mean, lo, hi = (test.mean, test.ci_low, test.ci_high) if test else (None, None, None)
        rows.append((c.condition, c.model, "-" if mean is None else f"{mean:.3f}",
                     "-" if lo is None or hi is None else f"[{lo:.3f}, {hi:.3f}]",
                     str(test.n_graded if test else 0), str(test.n_errors if test else 0)))
    cols = (Col("condition"), Col("model", drop=1), Col("test acc"), Col("95% CI"), Col("n"), Col("errors"))
    show(fitted(cols, rows, title=f"test accuracy (evidence: {results.evidence})", wide=wide), wide)
    for v in results.versus_baseline:  # spec order, each against the spec's first condition
        if v.condition == v.baseline:
            out.print(f"{v.condition} ({v.model}): {_num(v.mean)}   baseline")
        elif v.n_paired:
            out.print(f"{v.condition} ({v.model}): {_num(v.mean)}   vs {v.baseline}: {_signed(v.diff)} "
                      f"[{_signed(v.ci_low)}, {_signed(v.ci_high)}] ({v.n_paired} paired tasks{_mde(v.mde)})",
                      soft_wrap=True)
    for h in results.headroom or []:
        shares = ", ".join(f"{s.condition} {_signed(s.diff)}" + _share_text(s) for s in h.shares)
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
        show(quality_table(results, wide), wide)
    by_role = [(role, s.model_dump()) for role, s in sorted(results.calls.by_role.items())]
    show(role_table("model calls by role (cached calls included and shown)", by_role, wide=wide), wide)


QUALITY = ("usable", "echo", "duplicate", "repeated", "refused", "malformed")


def quality_table(results: RunResults, wide: bool = False) -> Fitted:
    """The update roles' replies during practice and what became of them, per condition × role (a kind of
    rejection no reply had is dropped first when the terminal is narrow)."""
    rows, styles = [], []
    for q in results.update_quality:
        row = q.model_dump()
        styles.append("yellow" if q.replies and q.usable < q.replies / 2 else None)
        rows.append((q.condition, q.model, q.role, str(q.replies), *(str(row[k]) for k in (*QUALITY, "parts"))))
    seen = {k for q in results.update_quality for k in QUALITY if q.model_dump()[k]}
    cols = (Col("condition"), Col("model", drop=3), Col("role"), Col("replies", justify="right"),
            *(Col(k, drop=0 if k == "usable" else 1 if k in seen else 2, justify="right") for k in QUALITY),
            Col("parts", drop=2, justify="right"))
    return fitted(cols, rows, title="update quality: what the update roles wrote (rejected replies by kind)",
                  wide=wide, styles=styles)


def _mde(value: float | None) -> str:
    """The comparison's MDE after its CI: a difference smaller than it is one these tasks would likely miss."""
    return "" if value is None else f", detects ±{value:.3f} at 80% power"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def role_table(title: str, rows: list[tuple[str, dict[str, Any]]], *, pending: dict[str, int] | None = None,
               wide: bool = False) -> Fitted:
    """Calls, cached calls, errors, tokens and cost per role (from results.json or straight from the ledger); with
    `pending` (a live run's calls in flight per role), a pending column, and those calls are not errors."""
    cols = [Col("role"), Col("calls", justify="right"), *([Col("pending", justify="right")] if pending else []),
            Col("cached", drop=2, justify="right"), Col("errors", justify="right"),
            Col("input tokens", drop=3, justify="right"), Col("output tokens", drop=3, justify="right"),
            Col("cost $", drop=1, justify="right")]
    shown = []
    for role, r in rows:
        waiting = (pending or {}).get(role, 0)
        shown.append((role, str(r["calls"]), *([str(waiting)] if pending else []), str(r["cached_calls"]),
                      str(r["errors"] - waiting), str(r["input_tokens"]), str(r["output_tokens"]),
                      f"{r['cost_usd'] or 0:.4f}"))
    return fitted(cols, shown, title=title, wide=wide)



def report(run_dir: RunDirArg, as_json: JsonOpt = False, wide: WideOpt = False) -> None:
    """Rebuild results.json and report.html from the run store."""
    from evoarena.protocol.run.reporting import rebuild_report

    results = rebuild_report(open_run(run_dir))
    if as_json:
        emit_json(results.model_dump())
    else:
        print_results(results, wide)
        out.print(f"wrote {run_dir / 'results.json'} and {run_dir / 'report.html'}")


def show_run(run_dir: RunDirArg, as_json: JsonOpt = False, wide: WideOpt = False) -> None:
    """The run: spec, evidence, each cell's scores and selected version, and call totals per role (while the run
    runs, its calls in flight as pending, not as errors)."""

    from evoarena.codec import to_plain
    from evoarena.store.calls import pending_by_role, totals_by_role
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
    cols = (Col("cell"), Col("status", drop=2), Col("version", drop=3), Col("test mean", justify="right"),
            Col("test pass", drop=4, justify="right"), Col("n", justify="right"), Col("errors", justify="right"),
            Col("val mean", justify="right"))
    rows = [(s.cell, s.status, (s.version or "(curriculum)")[:12], _num(s.test.mean), _num(s.test.pass_rate),
             str(s.test.n_graded), str(s.test.n_errors), _num(s.val.mean)) for s in scores]
    show(fitted(cols, rows, title="cells (test: the deployed version; val: its selection score)", wide=wide), wide)
    live = run_row.get("status") == "running"  # its unanswered ledger rows are calls in flight
    show(role_table("model calls by role", [(r["role"], r) for r in calls],
                    pending=pending_by_role(store) if live else None, wide=wide), wide)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def list_runs(root: Annotated[Path, typer.Argument()] = Path("runs"), as_json: JsonOpt = False,
              wide: WideOpt = False) -> None:
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
    keys = ("run_dir", "name", "status", "evidence", "started_at")
    cols = (Col("run_dir", fold=True), Col("name", drop=1), Col("status"), Col("evidence", drop=2),
            Col("started_at", drop=3))
    show(fitted(cols, [[str(r[k]) for k in keys] for r in rows], title=str(root), wide=wide), wide)



def _share_text(s: HeadroomShare) -> str:
    """" (20% of it, CI −40% to 85%)": a condition's share of the headroom with its CI ("unbounded" on a side the CI
    cannot bound); empty when there is no share."""
    if s.share is None:
        return ""
    low = "unbounded" if s.share_ci_low is None else f"{s.share_ci_low:.0%}"
    high = "unbounded" if s.share_ci_high is None else f"{s.share_ci_high:.0%}"
    return f" ({s.share:.0%} of it, CI {low} to {high})"
