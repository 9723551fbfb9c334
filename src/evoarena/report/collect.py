"""Read a run store into report records, and (re)build results.json + report.html from it and the views given.

The report names no benchmark or method: their sections come from the ReportViews passed in (the protocol passes
every registered one), each deciding whether it applies to the run. A rebuild reads the run once (RunSnapshot) and
computes every section from that reading.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from evoarena.report.hooks import ReportContext, ReportView, RunInfo, StateReader, no_methods
from evoarena.report.html import write_report
from evoarena.report.probes import DEFAULT_THRESHOLD, probes_section, summarise, warnings_by_condition
from evoarena.report.records import CallRecord, CellBudget, RunMeta, ScoreRecord
from evoarena.report.results import build_results
from evoarena.report.results_record import Probes, RunResults, SelectionCandidate, SelectionResult
from evoarena.report.snapshot import RunSnapshot
from evoarena.report.spend_curves import CellCheckpoints, Checkpoint, spend_curves
from evoarena.report.store_sections import report_extras
from evoarena.report.transfer import transfer_matrix
from evoarena.report.update_quality import update_quality
from evoarena.store import RunStore, queries
from evoarena.store.calls import LedgerOutcome, ledger_outcomes
from evoarena.store.probes import probe_rows
from evoarena.store.spend import checkpoint_tests, practice_spend

MethodResolver = Callable[[str], StateReader]
# ledger phases left out of `calls`: the probes before the cells (results.probes) and the gradings asked for after
# the run (results.transfer, results.spend_curves), so `calls` stays what the run itself spent
OUTSIDE_CALLS = ("probe", "transfer", "curve")


def score_records(store: RunStore, snap: RunSnapshot | None = None) -> list[ScoreRecord]:
    """Test scores of each cell's selected version, and that version's validation scores. A curriculum cell
    (no selection) contributes every stage's test score."""
    snap = snap or RunSnapshot.load(store)
    out: list[ScoreRecord] = []
    for c in snap.cells:
        if c.status != "done":
            continue
        for a in queries.attempt_scores(store, c.cell, c.selected_version):
            out.append(ScoreRecord(
                condition=c.condition, model=c.model, seed=c.seed, split="test" if a.phase == "test" else "val",
                task_id=a.task_id, score=float(a.score or 0.0), error=a.error is not None, passed=a.passed,
            ))  # fmt: skip
    return out


def call_records(store: RunStore, snap: RunSnapshot) -> list[CallRecord]:
    """Ledger rows of the cells (not the probes'), cache hits counted as a sequential run of the spec would have
    made them."""
    cells = snap.by_cell
    rows = [r for r in ledger_outcomes(store) if r.phase not in OUTSIDE_CALLS]
    cached = _canonical_cached(rows, snap.cell_order())
    out: list[CallRecord] = []
    for r in rows:
        c = cells.get(r.cell or "")
        out.append(CallRecord(
            condition=c.condition if c else None, model=c.model if c else None, seed=c.seed if c else None,
            role=r.role, model_id=r.model_id, input_tokens=r.input_tokens, output_tokens=r.output_tokens,
            cost_usd=r.cost_usd, latency_s=r.latency_s, cached=cached[r.id], error=r.error, phase=r.phase or "",
            played_by=r.model,
            input_tokens_evaluated=r.input_tokens_evaluated,  # as the ledger says this process computed them
        ))  # fmt: skip
    return out


def _canonical_cached(rows: Sequence[LedgerOutcome], order: Mapping[str, int]) -> dict[int, bool]:
    """Which of this run's calls count as paid and which as cache hits. The ledger says which row reached the
    provider; when cells (or a step's rollouts) ran at once, which of two identical calls got there first is a matter
    of timing. So per cache key the report keeps the ledger's count of paid calls and gives them to the rows a
    sequential run would have paid for — the earliest in (cell in spec order, then ledger order) — and the results
    are the same at any concurrency. Errors keep their own rows."""
    out = {r.id: r.cached for r in rows}
    by_key: dict[str, list[LedgerOutcome]] = {}
    for r in rows:
        if r.error is None:
            by_key.setdefault(r.cache_key, []).append(r)
    for same in by_key.values():
        paid = sum(not r.cached for r in same)
        for k, r in enumerate(sorted(same, key=lambda r: (order.get(r.cell or "", -1), r.id))):
            out[r.id] = k >= paid
    return out


def cell_budgets(snap: RunSnapshot) -> list[CellBudget]:
    out: list[CellBudget] = []
    for c in snap.cells:
        b = c.budget
        if not b:
            continue
        used = {k: float(v) if k == "usd" else int(v) for k, v in b["used"].items() if k != "exhausted_by"}
        out.append(CellBudget(condition=c.condition, model=c.model, seed=c.seed, limits=b["limits"], used=used,
                              exhausted=b["used"].get("exhausted_by") is not None))
    return out


def cell_selections(snap: RunSnapshot) -> list[SelectionResult]:
    """Why each finished cell that selects tested the version it did, by condition, model and seed."""
    out: list[SelectionResult] = []
    for c in sorted(snap.cells, key=lambda c: (c.condition, c.model, c.seed)):
        sel = c.selection if c.status == "done" else None
        if sel is None:
            continue
        out.append(SelectionResult(
            condition=c.condition, model=c.model, seed=c.seed, reason=sel.reason.value, text=sel.text(),
            selected=sel.selected, final=sel.final_version, n_val=sel.n_val, rule=sel.rule,
            candidates=[SelectionCandidate(version=k.version, step=k.step, val=k.val, skipped=k.skipped)
                        for k in sel.candidates],
            warning=sel.warning(),
        ))  # fmt: skip
    return out


def run_meta(snap: RunSnapshot) -> RunMeta:
    run, spec = snap.run, snap.spec
    extra: dict[str, Any] = {"rejected_outputs": snap.rejected_outputs,
                             "benchmark": snap.started.benchmark if snap.started else None}
    if spec.protocol.isolation != "in-process":
        extra["method_isolation"] = method_isolation(snap)
    if snap.started is not None and snap.started.libraries:
        extra["libraries"] = snap.started.libraries
    return RunMeta(
        run_id=run.id, spec_name=run.name, spec_hash=run.spec_hash, code_version=run.code_version,
        evidence=run.evidence, benchmark=spec.benchmark.name, test_split_hash=run.test_hash or "",
        isolation=run.isolation or "", started_at=run.started_at, finished_at=run.finished_at, extra=extra,
    )  # fmt: skip


def method_isolation(snap: RunSnapshot) -> dict[str, Any]:
    """How the methods of a `protocol.isolation: process` run were confined, from the runner's own events only: the
    level the spec asked for, the levels the cells got, and the promises that held in every cell and those that did
    not hold in some (docs/security.md)."""
    found = snap.isolation
    holds = [e.holds for e in found]
    return {"mode": snap.spec.protocol.isolation,
            "asked": snap.spec.protocol.method_confinement,
            "levels": sorted({str(e.level) for e in found}),
            "holds": [p for p in holds[0] if all(p in h for h in holds)] if holds else [],
            "lacks": list(dict.fromkeys(p for e in found for p in e.lacks))}


def with_probes(store: RunStore, snap: RunSnapshot, results: RunResults) -> RunResults:
    """The results with `probes` (the threshold and every role × method × model probed) and, on each condition
    whose role fell below the threshold, `probe_warnings`."""
    got = snap.probes.threshold if snap.probes else None
    threshold = DEFAULT_THRESHOLD if got is None else got
    rows = probe_rows(store)
    warnings = warnings_by_condition(summarise(rows), threshold)
    conditions = [c.model_copy(update={"probe_warnings": warnings[c.condition]}) if c.condition in warnings else c
                  for c in results.conditions]
    probes = Probes.model_validate(probes_section(rows, threshold))
    return results.model_copy(update={"probes": probes, "conditions": conditions})


def build_views(
    store: RunStore, snap: RunSnapshot, results: RunResults, views: Mapping[str, ReportView],
    resolve_method: MethodResolver = no_methods,
) -> dict[str, Any]:
    """results.json's `views`: the data of every view that applies to the run and has something to show, by name."""
    meta = results.meta
    run = RunInfo(name=meta.spec_name, benchmark=meta.benchmark, evidence=results.evidence,
                  methods=frozenset(c.method for c in snap.cells))
    ctx = ReportContext(store=store, run=run, meta=meta, conditions=results.conditions, spec=snap.run.spec,
                        cells=snap.cells, resolve_method=resolve_method)
    out: dict[str, Any] = {}
    for name, view in views.items():
        if view.applies(run):
            data = view.build(ctx)
            if data:
                out[name] = data
    return out


def run_results(store: RunStore, snap: RunSnapshot | None = None,
                scores: Sequence[ScoreRecord] | None = None) -> RunResults:
    """The run's record without the views' sections: the store's scores (of done cells; `scores` when the caller
    has read them), ledger rows and budgets through build_results, the update roles' reply quality, and the role
    probes. What `evoarena view` shows of a run, finished or not."""
    snap = snap or RunSnapshot.load(store)
    scores = score_records(store, snap) if scores is None else scores
    calls = call_records(store, snap)
    results = build_results(run_meta(snap), scores, calls, cell_budgets(snap), snap.conditions, snap.references)
    results = results.model_copy(update={"selections": cell_selections(snap),
                                         "update_quality": update_quality(snap, calls)})
    after = queries.graded_after(store)
    matrix = transfer_matrix(snap.cells, scores, queries.transfer_scores(store),
                             queries.calls(store, phase="transfer")) if "transfer" in after else None
    if matrix is not None:
        results = results.model_copy(update={"transfer": matrix})
    if snap.spec.protocol.spend_curves or "curve" in after:
        results = results.model_copy(update={"spend_curves": spend_curves(cell_checkpoints(store, snap))})
    return with_probes(store, snap, results)


def cell_checkpoints(store: RunStore, snap: RunSnapshot) -> list[CellCheckpoints]:
    """Each finished cell's checkpoints graded on val, with the practice spend up to each (calls, tokens, dollars)
    and its val and (where graded) test scores by task: what the score-vs-spend curves select from."""
    out = []
    for c in snap.cells:
        sel = c.selection if c.status == "done" else None
        if sel is None:
            continue
        steps = practice_spend(store, c.cell)
        prefix = [{"calls": 0.0, "tokens": 0.0, "usd": 0.0}]
        for st in steps:
            last = prefix[-1]
            prefix.append({"calls": last["calls"] + st.calls, "tokens": last["tokens"] + st.tokens,
                           "usd": last["usd"] + st.usd})
        checkpoints = []
        tests = checkpoint_tests(store, c.cell)
        for k in sel.candidates:
            if k.val is None:
                continue
            by_task = {a.task_id: float(a.score) for a in queries.attempt_scores(store, c.cell, k.version)
                       if a.phase == "select" and a.error is None and a.score is not None}
            checkpoints.append(Checkpoint(step=k.step, spend=prefix[min(k.step, len(steps))], val=k.val,
                                          by_task=by_task, test_by_task=tests.get(k.version)))
        out.append(CellCheckpoints(c.condition, c.model, c.seed, checkpoints))
    return out


def rebuild_report(
    store: RunStore, views: Mapping[str, ReportView] | None = None, resolve_method: MethodResolver = no_methods
) -> RunResults:
    """Recompute results.json and report.html from the store alone, with the sections of the views given (by name);
    `resolve_method` gives views the method classes whose `state_view` they read."""
    views = dict(views or {})
    snap = RunSnapshot.load(store)
    scores = score_records(store, snap)
    results = run_results(store, snap, scores)
    data = build_views(store, snap, results, views, resolve_method)
    if data:
        results = results.model_copy(update={"views": data})
    extras = report_extras(store, snap.cells, scores, snap.conditions)
    write_report(store.run_dir, results, views, extras)
    return results
