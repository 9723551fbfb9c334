"""`evoarena list methods|benchmarks|policies|views`: what a spec can name, with descriptions and params."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from evoarena.cli.common import JsonOpt, emit_json, fail
from evoarena.cli.fit import Col, WideOpt, fitted, show
from evoarena.wording import unknown

PLURALS = {"methods": "method", "benchmarks": "benchmark", "policies": "policy", "views": "view"}


def _params(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in sorted(params.items()))


def _origin(row: dict[str, Any]) -> str:
    """Where an entry comes from; a library method adds the library and its version (or that it is missing)."""
    lib = row.get("library")
    if not lib:
        return str(row["origin"])
    return f"{row['origin']} ({lib['name']} {lib['version'] or 'not installed'})"


def list_command(
    kind: Annotated[str, typer.Argument(help="methods, benchmarks, policies or views.")],
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """What a spec can name: every registered method, benchmark, scripted policy or report view (built-ins and
    installed plugins), with its one-line description and params (and a method's roles; with --json, each
    method's and benchmark's fields: type, default, allowed values or range, description). Your own code:
    `module:Name` in the spec."""
    from evoarena.protocol.catalog import entries

    if kind not in PLURALS:
        fail(f"list: {unknown('kind', kind, PLURALS)}")
    rows: list[dict[str, Any]] = [{"name": e.name, "origin": e.origin, "description": e.description, "params": e.params}
            for e in entries(PLURALS[kind])]  # type: ignore[arg-type]
    if kind == "methods":  # the roles a spec maps for it (an unmapped one is played by the solver's model)
        for row, e in zip(rows, entries("method"), strict=True):
            row["roles"] = list(getattr(e.obj, "roles", ()))
            lib = getattr(e.obj, "library", None)  # a library's optimiser: its name and installed version
            row["library"] = None if lib is None else {"name": lib, "version": e.obj.library_version()}
    if kind in ("methods", "benchmarks"):  # each param: name, type, default, allowed values or range, description
        for row, e in zip(rows, entries(PLURALS[kind]), strict=True):  # type: ignore[arg-type]
            row["fields"] = e.fields
    if as_json:
        emit_json(rows)
        return
    roles = [Col("roles", fold=True)] if kind == "methods" else []
    cols = [Col("name", fold=True), Col("origin", drop=2, fold=True), *roles,
            Col("description", fold=True, fold_min=30), Col("params", drop=1, fold=True, fold_min=24)]
    shown = [{**r, "roles": ", ".join(r.get("roles", ())), "params": _params(r["params"]), "origin": _origin(r)}
             for r in rows]
    show(fitted(cols, [[s[c.name] for c in cols] for s in shown], title=kind, wide=wide), wide)
