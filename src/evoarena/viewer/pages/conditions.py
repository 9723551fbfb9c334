"""The conditions page: per condition its test (and val) score with CI, n and errors, the difference to the baseline
(the spec's first condition) with its CI, the budgets used, tokens and cost per role and phase, and — when the run
has them — the transfer matrix and the score-vs-spend curves; all from report.collect.run_results (cached per store
write mark), so the numbers are results.json's, also mid-run."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from evoarena.report.html import spend_svgs
from evoarena.report.results_record import BudgetResult, Calls, ConditionResult, Versus
from evoarena.store import RunStore, queries
from evoarena.store.view_conditions import phase_counts
from evoarena.viewer.pages.common import RunHeader, header, run_store
from evoarena.viewer.pages.scores import ordered as _ordered
from evoarena.viewer.render import page
from evoarena.viewer.results_cache import cached_results


def _context(run: RunHeader, store: RunStore) -> dict[str, Any]:
    got = cached_results(store)
    results = got.results
    order = run.conditions
    cells = queries.cells(store)
    pending = [c for c in cells if c.status != "done"]
    progress: dict[str, dict[str, Any]] = {}
    if pending:
        names = {c.cell for c in pending}
        for p in phase_counts(store):
            if p.cell in names:
                progress.setdefault(p.cell, {})[p.phase] = p
    conditions: list[ConditionResult] = []
    versus: dict[tuple[str, str], Versus] = {}
    calls: Calls | None = None
    budgets: list[BudgetResult] = []
    if results is not None:
        versus = {(v.condition, v.model): v for v in results.versus_baseline}
        conditions = _ordered(results.conditions, order)
        calls = results.calls.model_copy(update={"by_condition": _ordered(results.calls.by_condition, order)})
        budgets = _ordered(results.budgets, order)
    budget_keys = sorted({k for b in budgets for k in b.used} | {k.removeprefix("max_") for b in budgets
                                                                   for k in b.limits})
    status = run.row.status if run.row else "empty"
    return {"run": run, "status": status, "results": results, "updating": got.updating, "source": got.source,
            "poll": got.updating or status == "running",
            "conditions": conditions, "versus": versus, "calls": calls, "budgets": budgets,
            "budget_keys": budget_keys, "pending": pending, "progress": progress,
            "baseline": order[0] if order else None,
            "transfer": results.transfer if results is not None else None,
            "spend": results.spend_curves if results is not None else None,
            "spend_svgs": spend_svgs(results.spend_curves) if results is not None and results.spend_curves else []}


def conditions(request: Request) -> HTMLResponse:
    run_id, store = run_store(request)
    return page(request, "conditions.html.j2", **_context(header(run_id, store), store))


def conditions_body(request: Request) -> HTMLResponse:
    run_id, store = run_store(request)
    return page(request, "conditions_body.html.j2", **_context(header(run_id, store), store))


ROUTES = [
    Route("/run/{run}/conditions", conditions, name="conditions"),
    Route("/run/{run}/fragments/conditions", conditions_body, name="conditions_body"),
]
NAV = [("conditions", "conditions")]
