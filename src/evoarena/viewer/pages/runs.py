"""The runs page (every run being viewed, refreshed live) and a run's overview (spec, cells, cost per role); both
with each condition's test score and its difference to the baseline, as results.json has them."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from evoarena.store import RunStore, queries
from evoarena.store.view_queries import run_totals
from evoarena.viewer.pages.common import catalog, header, run_store, wall_time
from evoarena.viewer.pages.scores import score_lines
from evoarena.viewer.render import page
from evoarena.viewer.results_cache import cached_results


def _summary(run_id: str, store: RunStore) -> dict[str, Any]:
    """The run's row, totals and scores; the scores of a run without a readable results.json are computed in the
    background (the pages do not wait: they refresh every 3 s and show them once ready)."""
    head, totals = header(run_id, store), run_totals(store)
    row = head.row
    got = cached_results(store, wait=0.0)
    return {"scores": score_lines(got.results, head.conditions), "scores_updating": got.updating,
            "id": run_id, "name": head.name, "evidence": row.evidence if row else "-",
            "status": row.status if row else "empty", "started": row.started_at if row else None,
            "wall": wall_time(row.started_at if row else None, row.finished_at if row else None, totals.last_write),
            "benchmark": head.spec.get("benchmark", {}).get("name", "-"), "totals": totals,
            "code": row.code_version if row else "-"}


def _summaries(request: Request) -> list[dict[str, Any]]:
    cat = catalog(request)
    return [_summary(e.id, cat.store(e.id)) for e in cat.entries()]


def runs(request: Request) -> HTMLResponse:
    return page(request, "runs.html.j2", runs=_summaries(request))


def runs_rows(request: Request) -> HTMLResponse:
    return page(request, "runs_rows.html.j2", runs=_summaries(request))


def _overview(request: Request, template: str) -> HTMLResponse:
    run_id, store = run_store(request)
    summary = _summary(run_id, store)
    return page(request, template, run=header(run_id, store), summary=summary, cells=queries.cells(store),
                roles=summary["totals"].roles)


def run(request: Request) -> HTMLResponse:
    return _overview(request, "run.html.j2")


def run_cells(request: Request) -> HTMLResponse:
    return _overview(request, "run_cells.html.j2")


ROUTES = [
    Route("/", runs, name="runs"),
    Route("/fragments/runs", runs_rows, name="runs_rows"),
    Route("/run/{run}", run, name="run"),
    Route("/run/{run}/fragments/cells", run_cells, name="run_cells"),
]
