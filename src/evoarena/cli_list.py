"""`evoarena list methods|benchmarks|policies|views`: what a spec can name, with descriptions and params."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from evoarena.cli_common import JsonOpt, emit_json, fail, out

PLURALS = {"methods": "method", "benchmarks": "benchmark", "policies": "policy", "views": "view"}


def _params(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in sorted(params.items()))


def list_command(
    kind: Annotated[str, typer.Argument(help="methods, benchmarks, policies or views.")],
    as_json: JsonOpt = False,
) -> None:
    """What a spec can name: every registered method, benchmark, scripted policy or report view (built-ins and
    installed plugins), with its one-line description and params. Your own code: `module:Name` in the spec."""
    from evoarena.protocol.catalog import entries

    if kind not in PLURALS:
        fail(f"list: unknown kind {kind!r} (known: {', '.join(PLURALS)})")
    rows: list[dict[str, Any]] = [{"name": e.name, "origin": e.origin, "description": e.description, "params": e.params}
            for e in entries(PLURALS[kind])]  # type: ignore[arg-type]
    if as_json:
        emit_json(rows)
        return
    table = Table(title=kind)
    for col in ("name", "origin", "description", "params"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r["name"], r["origin"], r["description"], _params(r["params"]))
    out.print(table)


def register(app: typer.Typer) -> None:
    app.command(name="list")(list_command)
