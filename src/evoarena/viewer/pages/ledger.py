"""The ledger page: the calls table filtered by cell, phase, role, cached and error (a WHERE), newest first, paged
by keyset on the row id (100 a page, fast at any depth), with the totals of every matching row."""

from __future__ import annotations

from typing import cast

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from evoarena.store import view_ledger
from evoarena.store.view_ledger import NO_CELL, LedgerFilter, YesNo
from evoarena.viewer.pages.common import header, run_store
from evoarena.viewer.pages.paging import int_param, with_query
from evoarena.viewer.render import page

PAGE_SIZE = 100


def _yes_no(value: str | None) -> YesNo:
    return cast(YesNo, value) if value in ("yes", "no") else ""


def ledger_filter(request: Request) -> LedgerFilter:
    q = request.query_params
    return LedgerFilter(cell=q.get("cell", ""), phase=q.get("phase", ""), role=q.get("role", ""),
                        cached=_yes_no(q.get("cached")), error=_yes_no(q.get("error")))


def ledger(request: Request) -> HTMLResponse:
    run_id, store = run_store(request)
    f = ledger_filter(request)
    size = min(max(int_param(request, "size", PAGE_SIZE) or PAGE_SIZE, 1), 1000)
    calls = view_ledger.page(store, f, before=int_param(request, "before"), after=int_param(request, "after"),
                             size=size)
    path = request.url.path
    keep = {**f.params(), **({"size": size} if size != PAGE_SIZE else {})}
    links = {"newest": with_query(path, **keep) if calls.newer is not None else None,
             "newer": with_query(path, **keep, after=calls.newer) if calls.newer is not None else None,
             "older": with_query(path, **keep, before=calls.older) if calls.older is not None else None}
    return page(request, "ledger.html.j2", run=header(run_id, store), filter=f, calls=calls,
                totals=view_ledger.totals(store, f), choices=view_ledger.choices(store), links=links,
                no_cell=NO_CELL, size=size, default_size=PAGE_SIZE)


ROUTES = [Route("/run/{run}/ledger", ledger, name="ledger")]
NAV = [("ledger", "ledger")]
