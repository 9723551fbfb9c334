"""Query-string helpers the tasks, trace and ledger pages share: an int parameter read leniently, a link with query
parameters, and the URL of a harness version's page (built by pattern: that page lives in another module)."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from starlette.requests import Request


def int_param(request: Request, name: str, default: int | None = None) -> int | None:
    """Query parameter `name` as an int; `default` when absent or not a number."""
    raw = request.query_params.get(name, "")
    try:
        return int(raw)
    except ValueError:
        return default


def with_query(path: str, **params: object) -> str:
    """`path?k=v…` with the parameters that are set (None and "" left out)."""
    kept = {k: str(v) for k, v in params.items() if v is not None and v != ""}
    return f"{path}?{urlencode(kept)}" if kept else path


def version_url(run_id: str, cell: str, version: str) -> str:
    """The harness version page: `/run/{run}/version/{cell}/{version}`."""
    return f"/run/{quote(run_id, safe='')}/version/{quote(cell, safe='')}/{quote(version, safe='')}"
