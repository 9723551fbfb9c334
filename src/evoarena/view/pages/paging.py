"""Query-string helpers the pages share: an int parameter read leniently, and a link with query parameters."""

from __future__ import annotations

from urllib.parse import urlencode

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

