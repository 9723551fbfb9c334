"""`evoarena plan SPEC`: before spending — the minimum detectable difference of each comparison against the baseline,
whether val can break a tie between checkpoints, and the calls, tokens, dollars and time the run will take; and the one
warning line `evoarena run` prints when a comparison cannot detect `protocol.min_effect`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evoarena.cli.common import JsonOpt, check_range, emit_json, fail, out
from evoarena.cli.fit import Col, WideOpt, fitted, show
from evoarena.spec import ExperimentSpec, SpecError, load_spec

if TYPE_CHECKING:
    from evoarena.protocol.run.planning import Estimate, Plan
    from evoarena.protocol.validate import Resolved


def plan(
    spec_path: Annotated[Path, typer.Argument(help="Experiment spec (YAML).")],
    pilot: Annotated[int | None, typer.Option(
        help="Grade the baseline's initial harness on the first N test tasks with the spec's solver model and first "
        "seed (ledgered under runs/pilots/, cached: the run reuses those calls). Without it, the last pilot of this "
        "spec is used if there is one; else the baseline is assumed at 0.5, the widest pass/fail spread.")] = None,
    model: Annotated[str | None, typer.Option(help="Map every role to this model, as `evoarena run --model`.")] = None,
    baseline: Annotated[float | None, typer.Option(
        help="The baseline's test accuracy (0 to 1), instead of a pilot's.")] = None,
    discordance: Annotated[float | None, typer.Option(
        help="E[D²] of the per-task difference (pass/fail: the share of tasks the two conditions disagree on), 0 "
        "to 1; default the baseline's own per-task variance, p(1 − p) for pass/fail.")] = None,
    alpha: Annotated[float, typer.Option(help="Two-sided significance level, in (0, 1).")] = 0.05,
    power: Annotated[float, typer.Option(help="The power the MDE is computed at, in (0, 1).")] = 0.8,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="KEY=VALUE set in the spec first (repeatable), as `evoarena run --set`.")] = None,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """Power check before spending: the minimum detectable paired difference (MDE) of each condition against the
    baseline (the spec's first condition) on the test split, at the given power and α; the chance two checkpoints an
    MDE apart tie on val (ties keep the earlier one) or the better one is selected; and an estimate of calls,
    tokens, dollars (at the solver model's price table) and sequential wall time per condition (from the pilot).
    Tasks are the unit: replicate seeds are averaged within a task and add no tasks."""
    from evoarena.protocol.run.pilot import cached_pilot, run_pilot
    from evoarena.protocol.run.planning import make_plan

    check_range("--pilot", pilot, 1, 100_000)
    for option, value in (("--alpha", alpha), ("--power", power)):
        if not 0 < value < 1:
            fail(f"{option}: {value:g} is out of range (between 0 and 1, exclusive)")
    check_range("--baseline", baseline, 0, 1)
    check_range("--discordance", discordance, 0, 1)
    search = (spec_path.resolve().parent,)
    try:
        spec = load_spec(spec_path, set_ or ())
        if model:
            spec = spec.with_model(model)
        measured = run_pilot(spec, pilot, search=search) if pilot else cached_pilot(spec, search)
        result = make_plan(spec, pilot=measured, baseline=baseline, discordance=discordance, alpha=alpha,
                           power_=power, search=search)
    except (SpecError, ValueError, RuntimeError) as e:
        fail(str(e))
        return
    if as_json:
        from evoarena.codec import to_plain

        emit_json(to_plain(result))
        return
    print_plan(result, wide)


def print_plan(p: Plan, wide: bool = False) -> None:
    """The plan as a header, one table (the columns that fit; all with `wide`) and the warning line."""
    r = p.rates
    out.print(f"[bold]{p.spec}[/]: {p.n_train} train / {p.n_val} val / {p.n_test} test tasks × {p.seeds} seed(s); "
              f"α {p.alpha:g}, power {p.power:.0%}, min_effect {p.min_effect:g}", highlight=False, soft_wrap=False)
    if r.source == "pilot" and p.pilot is not None:
        cached = f", {p.pilot.cached_calls} cached" if p.pilot.cached_calls else ""
        where = f"a pilot of {r.n} test tasks ({p.pilot.model}, seed {p.pilot.seed}; {p.pilot.calls} calls{cached})"
    else:
        where = {"given": "given (--baseline)", "assumed": "assumed: no pilot (run `evoarena plan --pilot N`)"}.get(
            r.source, r.source)
    out.print(f"baseline {r.mean:.3f}, {where}; E[D²] {p.discordance:.3f}; tasks are the unit (seeds are averaged "
              "within a task)", highlight=False, soft_wrap=False)
    rows = []
    for c in [*p.baselines, *p.comparisons]:
        is_base = c.condition == c.baseline
        tie = c.tie
        rows.append((
            c.condition, "-" if is_base else c.baseline,
            "-" if c.mde is None else f"{c.mde:.3f}",
            "-" if c.detects is None else ("yes" if c.detects else "no"),
            "-" if tie.resolution is None else f"{tie.resolution:.3f}",
            "-" if is_base or tie.tie is None else f"{tie.tie:.2f}",
            "-" if is_base or tie.better_wins is None else f"{tie.better_wins:.2f}",
            *_estimate_cells(c.estimate),
        ))
    right: dict[str, int] = {"MDE": 0, "≤min": 0, "val": 1, "tie": 2, "picks": 2, "calls": 0, "tokens": 3, "usd": 0,
                             "wall": 0}
    cols = (Col("condition"), Col("vs"), *(Col(name, drop=drop, justify="right") for name, drop in right.items()))
    show(fitted(cols, rows, wide=wide, edge=False, pad_edge=False), wide)  # whole numbers: columns drop, not cut
    out.print(f"MDE: the smallest paired difference found at {p.power:.0%} power; ≤min: at most min_effect; val: one "
              "val task's step; tie / picks: the chance two checkpoints an MDE apart tie on val (the earlier is kept) "
              "/ the better is selected; calls, tokens, usd, wall: all seeds, sequential, from the pilot's calls "
              "(≥: no call budget, update calls not counted); usd at the solver model's price table (—: no price "
              "for a remote model, or no pilot; $0 local: an embedded or scripted model costs nothing)",
              style="dim", highlight=False, soft_wrap=False)
    line = p.warning()
    if line:
        out.print(f"[yellow]power check: {line}[/]", highlight=False, soft_wrap=False)


def _estimate_cells(e: Estimate) -> tuple[str, str, str, str]:
    calls = f"{'≥' if e.at_least else ''}{e.calls}"
    tokens = "-" if e.tokens is None else f"{e.tokens / 1000:.1f}k"
    wall = "-" if e.wall_s is None else f"{e.wall_s / 60:.1f}m"
    return calls, tokens, usd_cell(e), wall


def usd_cell(e: Estimate) -> str:
    """The dollar column: "$0 local" for a local model without a price, "—" when unknown, else dollars (cents
    shown down to $0.01, four digits below it; `≥` as for calls)."""
    if e.local:
        return "$0 local"
    if e.usd is None:
        return "—"
    at_least = "≥" if e.at_least else ""
    return f"{at_least}${e.usd:,.2f}" if e.usd >= 0.01 else f"{at_least}${e.usd:.4f}"


def run_warning(spec: ExperimentSpec, search: tuple[Path, ...], resolved: Resolved) -> str | None:
    """The line `evoarena run` prints before any method runs, from the spec and the last pilot of it if one exists
    (no model call), or None."""
    from evoarena.protocol.run.pilot import cached_pilot
    from evoarena.protocol.run.planning import make_plan

    line = make_plan(spec, pilot=cached_pilot(spec, search), search=search, resolved=resolved).warning()
    return None if line is None else f"power check: {line} (evoarena plan shows the table)"
