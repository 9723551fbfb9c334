"""URL helpers the pages share: an int query parameter read leniently, a row id from the path, and a link with query
parameters. A number no SQLite integer can hold is a 404 (nothing has that id), never a server error."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request

from evoarena.spec import INT64_MAX


def int_param(request: Request, name: str, default: int | None = None) -> int | None:
    """Query parameter `name` as an int; `default` when absent or not a number; 404 past SQLite's integers."""
    raw = request.query_params.get(name, "")
    try:
        value = int(raw)
    except ValueError:
        return default
    if not -INT64_MAX - 1 <= value <= INT64_MAX:
        raise HTTPException(404, f"{name}={raw[:40]}: out of range")
    return value


def row_id(request: Request, name: str = "id") -> int:
    """Path parameter `name` as a row id: a number from 0 to SQLite's largest integer, else 404."""
    raw = str(request.path_params[name])
    try:
        value = int(raw)
    except ValueError:
        raise HTTPException(404, f"no such id {raw[:40]!r}") from None
    if not 0 <= value <= INT64_MAX:
        raise HTTPException(404, f"no such id {raw[:40]!r}: out of range")
    return value


def with_query(path: str, **params: object) -> str:
    """`path?k=v…` with the parameters that are set (None and "" left out)."""
    kept = {k: str(v) for k, v in params.items() if v is not None and v != ""}
    return f"{path}?{urlencode(kept)}" if kept else path

