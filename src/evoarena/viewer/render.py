"""The viewer's templates (Jinja2, autoescaped) and the filters they share."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, pass_context, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse


@cache
def environment() -> Environment:
    env = Environment(loader=PackageLoader("evoarena.viewer", "templates"), autoescape=select_autoescape(["j2"]),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["score"] = score
    env.filters["short"] = lambda s, n=10: "" if s is None else str(s)[:n]
    env.filters["tokens"] = lambda n: "-" if n is None else f"{int(n):,}"
    env.filters["money"] = lambda x: "-" if x is None else f"${float(x):.4f}"
    env.filters["pretty_json"] = lambda v: json.dumps(v, indent=2, sort_keys=True, ensure_ascii=False)
    env.globals["url_for"] = url_for
    env.globals["nav_pages"] = []  # (route name, label) of the per-run pages, set by the app
    return env


@pass_context
def url_for(context: Any, name: str, /, **params: Any) -> str:
    """The path of route `name` (relative to the server's root, so it works behind any host name)."""
    request: Request = context["request"]
    return str(request.app.url_path_for(name, **{k: str(v) for k, v in params.items()}))


def score(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{float(x):.{digits}f}"


# pages that refresh parts of themselves (their own htmx polling); every other page of a running run is re-fetched
# whole every few seconds and its main part swapped in (`live` in base.html.j2)
SELF_REFRESHING = frozenset({"run.html.j2", "conditions.html.j2"})


def page(request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """`template` rendered with `context` and the request; `live` when the page's run is still running."""
    run = context.get("run")
    row = getattr(run, "row", None)
    context.setdefault("live", template not in SELF_REFRESHING and getattr(row, "status", None) == "running")
    html = environment().get_template(template).render(request=request, **context)
    return HTMLResponse(html, status_code=status_code)
