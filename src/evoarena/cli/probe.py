"""`evoarena probe-roles SPEC`: can each role's model play its role? The role probes' table, per role × method."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from evoarena.cli.common import JsonOpt, check_range, emit_json, err, fail, out
from evoarena.cli.fit import Col, Fitted, WideOpt, fitted, show
from evoarena.spec import INT64_MAX, SpecError, load_spec


def probe_table(rows: list[dict[str, Any]], threshold: float, title: str = "role probes",
                wide: bool = False) -> Fitted:
    """The probes' table: one row per role × method × model; a row below the threshold is marked."""
    cols = (Col("role"), Col("method"), Col("model"), Col("probes", drop=3, justify="right"),
            Col("well-formed", drop=2, justify="right"), Col("usable", justify="right"),
            Col("tokens", drop=1, justify="right"), Col("most frequent refusal", fold=True))
    shown = [(r["role"], r["method"], r["model"], str(r["n"]), f"{r['well_formed']}/{r['n']}",
              f"{r['usable']}/{r['n']}", str(r["tokens"]), r["reasons"][0] if r["reasons"] else "") for r in rows]
    return fitted(cols, shown, title=f"{title} (warning below {threshold:.0%} usable)", wide=wide,
                  styles=["yellow" if r["warning"] else None for r in rows])


def probe_warnings(rows: list[dict[str, Any]]) -> None:
    for r in rows:
        if r["warning"]:
            err.print(f"[bold yellow]warning:[/] {r['warning']} (conditions: {', '.join(r['conditions'])})",
                      soft_wrap=True)


def probe_roles(
    spec_path: Annotated[Path, typer.Argument(help="Experiment spec (YAML).")],
    model: Annotated[str | None, typer.Option(help="Map every role to this model (e.g. scripted, embedded).")] = None,
    run_dir: Annotated[Path | None, typer.Option(help="Run store to keep the probes in (default: the run's).")] = None,
    threshold: Annotated[float, typer.Option(help="Warn below this share (0 to 1) of usable replies.")] = 0.5,
    max_tokens: Annotated[int, typer.Option(help="Cap on each probe reply's tokens (at least 1).")] = 512,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Send each update role of each method in SPEC a handful of canned update situations (the method's own
    templates, tiny fixed examples) and judge the replies with the method's own parser. Cached and kept in the run
    store, so `evoarena run` of the same spec reuses them."""
    from evoarena.protocol.run.probes import probe_spec
    from evoarena.protocol.run.runner import default_run_dir

    check_range("--threshold", threshold, 0, 1)
    check_range("--max-tokens", max_tokens, 1, INT64_MAX)
    try:
        spec = load_spec(spec_path)
        if model:
            spec = spec.with_model(model)
        target = run_dir or default_run_dir(spec)
        summaries = probe_spec(spec, target, search=(spec_path.resolve().parent,), max_tokens=max_tokens)
    except (SpecError, ValueError, KeyError) as e:
        fail(str(e))
        return
    rows = [s.row(threshold) for s in summaries]
    if as_json:
        emit_json({"run_dir": str(target), "threshold": threshold, "rows": rows})
        return
    show(probe_table(rows, threshold, title=f"role probes: {spec.name}", wide=wide), wide)
    probe_warnings(rows)
    out.print(f"kept in {target}")
