"""The tasks page: a phase's tasks × conditions, each cell the seed-averaged score (n attempts) and the start of the
answer linking to the attempt's trace; paged in SQL, optionally only the tasks the conditions disagree on."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from evoarena.spec import INT64_MAX
from evoarena.store.view_tasks import phases, task_grid
from evoarena.viewer.pages.common import header, run_store
from evoarena.viewer.pages.paging import int_param, with_query
from evoarena.viewer.render import page

PER_PAGE = 50


def tasks(request: Request) -> HTMLResponse:
    run_id, store = run_store(request)
    run = header(run_id, store)
    present = phases(store)
    phase = request.query_params.get("phase") or ("test" if "test" in present or not present else present[0])
    disagree = request.query_params.get("disagree") == "1"
    size = min(max(int_param(request, "size", PER_PAGE) or PER_PAGE, 1), 500)
    number = int_param(request, "page", 1) or 1
    if number > INT64_MAX // size:  # its first row's offset would not fit SQLite's integers
        raise HTTPException(404, f"no page {number}")
    grid = task_grid(store, phase=phase, page=number, per_page=size,
                     disagree=disagree, order=run.conditions)
    path = request.url.path

    def link(n: int) -> str:
        return with_query(path, phase=phase, disagree="1" if disagree else None,
                          size=size if size != PER_PAGE else None, page=n)

    return page(request, "tasks.html.j2", run=run, grid=grid, phases=present, disagree=disagree, link=link,
                default_size=PER_PAGE)


ROUTES = [Route("/run/{run}/tasks", tasks, name="tasks")]
NAV = [("tasks", "tasks")]
