"""The `evoarena view` web app: Starlette routes from `pages`, server-rendered templates, htmx (shipped in
`static/`) for live refresh and paging; every store opened read-only."""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from evoarena.viewer.catalog import RunCatalog, UnknownRun
from evoarena.viewer.pages import conditions, curves, ledger, lineage, runs, tasks, trace
from evoarena.viewer.render import environment, page

PAGES = [runs, conditions, lineage, tasks, curves, ledger, trace]
STATIC = Path(__file__).resolve().parent / "static"


async def _not_found(request: Request, exc: Exception) -> Response:
    what = f"no run named {exc.args[0]!r}" if isinstance(exc, UnknownRun) else str(getattr(exc, "detail", exc))
    return page(request, "error.html.j2", status_code=404, message=what)


def create_app(paths: list[Path]) -> Starlette:
    """The viewer over the run directories (or runs roots) in `paths`."""
    routes: list[Route | Mount] = [r for module in PAGES for r in module.ROUTES]
    routes.append(Mount("/static", app=StaticFiles(directory=STATIC), name="static"))
    app = Starlette(routes=routes, exception_handlers={UnknownRun: _not_found, 404: _not_found})
    app.state.catalog = RunCatalog(paths)
    environment().globals["nav_pages"] = [item for module in PAGES for item in getattr(module, "NAV", [])]
    return app

