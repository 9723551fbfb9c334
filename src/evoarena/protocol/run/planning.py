"""The power check before spending: for each comparison against the baseline, the minimum detectable paired difference
(report/power.py) on the spec's test split, whether val can tell two checkpoints that far apart, and what the run
will cost in calls, tokens, dollars and time — from a pilot (protocol/run/pilot.py), from given rates, or, with
neither, from the widest spread a pass/fail baseline can have (p = 0.5)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evoarena.protocol.run.cell_work import plan_cells
from evoarena.protocol.run.pilot import Pilot
from evoarena.protocol.validate import Resolved, validate_run
from evoarena.report import power
from evoarena.spec import ExperimentSpec, ModelSpec, SpecError


@dataclass(frozen=True)
class Rates:
    """The baseline's per-task accuracy and spread the MDE is computed from, and where they came from."""

    source: Literal["pilot", "given", "assumed"]
    mean: float
    variance: float
    n: int | None  # the pilot's graded tasks
    edge: str | None  # "floor" / "ceiling" of the pilot or the given rate


@dataclass(frozen=True)
class Estimate:
    """One condition's calls (all seeds), tokens, dollars and sequential wall time; `at_least` when the budget sets
    no call limit (a method's update calls are then not counted). `usd` is None when the solver model has no price
    (a remote model whose price table is all zero) or no pilot measured tokens; `local` when it is a local model
    with no price (embedded or scripted: $0)."""

    calls: int
    at_least: bool
    tokens: int | None
    wall_s: float | None
    usd: float | None = None
    local: bool = False


@dataclass(frozen=True)
class Comparison:
    condition: str
    model: str
    baseline: str
    n_test: int
    mde: float | None
    detects: bool | None  # the MDE is at most min_effect
    tie: power.TieBreak
    estimate: Estimate


@dataclass(frozen=True)
class Plan:
    spec: str
    alpha: float
    power: float
    min_effect: float
    n_train: int
    n_val: int
    n_test: int
    seeds: int
    rates: Rates
    discordance: float
    baselines: list[Comparison]  # each model's baseline condition (mde None)
    comparisons: list[Comparison]
    pilot: Pilot | None

    def warning(self) -> str | None:
        """One line when a comparison cannot detect min_effect or the baseline sits at a floor or ceiling; else
        None."""
        reasons = []
        short = [c for c in self.comparisons if not c.detects]
        if short:
            worst = max((c.mde for c in short if c.mde is not None), default=None)
            mde = f"MDE {worst:.2f}" if worst is not None else "no MDE"
            bases = ", ".join(dict.fromkeys(c.baseline for c in short))
            reasons.append(f"{', '.join(c.condition for c in short)} vs {bases} cannot detect "
                           f"min_effect {self.min_effect:.2f} ({mde} at {self.power:.0%} power on {self.n_test} "
                           f"test tasks, baseline {self.rates.mean:.2f} {self.rates.source})")
        if self.rates.edge is not None:
            of = f"the pilot ({self.rates.n} tasks)" if self.rates.source == "pilot" else "the given rate"
            reasons.append(f"the baseline is at the {self.rates.edge} of {of}: {self.rates.mean:.2f}")
        return "; ".join(reasons) or None


def make_plan(spec: ExperimentSpec, *, pilot: Pilot | None = None, baseline: float | None = None,
              discordance: float | None = None, alpha: float = power.ALPHA, power_: float = power.POWER,
              search: tuple[Path, ...] = (), resolved: Resolved | None = None) -> Plan:
    """The plan of `spec`: given rates (`baseline`, `discordance`) win over the pilot, the pilot over the assumed
    p = 0.5. Bad numbers are a one-line SpecError. `resolved`: `validate_run`'s answer when the caller has it."""
    for name, value in (("--baseline", baseline), ("--discordance", discordance)):
        if value is not None and not 0.0 <= value <= 1.0:
            raise SpecError(f"{name}: {value:g} is out of range (from 0 to 1)")
    try:
        power.z_sum(alpha, power_)
    except ValueError as err:
        raise SpecError(f"--{str(err).split()[0]}: {err}") from None
    sizes = _split_sizes(spec, resolved or validate_run(spec, search))
    rates = _rates(spec, pilot, baseline)
    psi = discordance if discordance is not None else rates.variance
    n_train, n_val, n_test = sizes
    rows = []
    baseline_of: dict[str, str] = {}
    for m in spec.methods:
        model = _solver(spec, m.condition)
        base = baseline_of.setdefault(model, m.condition)
        mde = None if base == m.condition else power.mde(n_test, psi, alpha=alpha, power=power_)
        tie = power.tie_break(n_val, mde if mde is not None else spec.protocol.min_effect, psi)
        est = _estimate(spec, sizes, pilot, spec.models[model], frozen=m.name == "frozen")
        rows.append(Comparison(m.condition, model, base, n_test, mde,
                               None if mde is None else mde <= spec.protocol.min_effect, tie, est))
    return Plan(spec.name, alpha, power_, spec.protocol.min_effect, n_train, n_val, n_test, len(spec.seeds), rates,
                psi, [r for r in rows if r.condition == r.baseline], [r for r in rows if r.condition != r.baseline],
                pilot)


def _solver(spec: ExperimentSpec, condition: str) -> str:
    plan = next(p for p in plan_cells(spec) if p.condition == condition)
    return plan.model


def _split_sizes(spec: ExperimentSpec, resolved: Resolved) -> tuple[int, int, int]:
    try:
        tasks = resolved.benchmark(**spec.benchmark.params).build()
    except ValueError as err:
        raise SpecError(str(err)) from None
    return tuple(sum(t.split == s for t in tasks) for s in ("train", "val", "test"))  # type: ignore[return-value]


def _rates(spec: ExperimentSpec, pilot: Pilot | None, given: float | None) -> Rates:
    if given is not None:
        return Rates("given", given, given * (1.0 - given), None, power.edge(given, spec.protocol.min_effect))
    if pilot is not None:
        return Rates("pilot", pilot.mean, power.score_variance(pilot.scores), pilot.n,
                     power.edge(pilot.mean, spec.protocol.min_effect))
    return Rates("assumed", 0.5, 0.25, None, None)


def _estimate(spec: ExperimentSpec, sizes: tuple[int, int, int], pilot: Pilot | None, solver: ModelSpec, *,
              frozen: bool) -> Estimate:
    """Per condition over its seeds: evolution (the call budget when set, else one solver call per practice step and
    one per val task of every checkpoint it may grade; `frozen` grades one) plus one call per test task; dollars at
    the solver's price table (as the ledger prices a call) and the pilot's input/output mix, evolution capped by
    `max_usd`."""
    n_train, n_val, n_test = sizes
    p = spec.protocol
    steps = n_train * p.epochs
    checkpoints = 1 if frozen else 1 + p.epochs + (steps // p.select_every if p.select_every else 0)
    limit = spec.budget.max_calls
    floor = steps + n_val * checkpoints
    evolution = min(floor, limit) if frozen and limit is not None else limit if limit is not None else floor
    per_call = pilot.tokens_per_call() if pilot is not None else None
    evo_tokens = None if per_call is None else evolution * per_call
    if evo_tokens is not None and spec.budget.max_tokens is not None:
        evo_tokens = min(evo_tokens, spec.budget.max_tokens)
    seeds = len(spec.seeds)
    calls = seeds * (evolution + n_test)
    tokens = None if per_call is None or evo_tokens is None else round(seeds * (evo_tokens + n_test * per_call))
    latency = pilot.call_latency_s if pilot is not None else None
    price = solver.price
    local = solver.backend != "openai" and price.input_per_mtok == price.output_per_mtok == 0
    usd: float | None = 0.0 if local else None
    per_token = _usd_per_token(solver, pilot)
    if per_token is not None and per_call is not None and evo_tokens is not None:
        evo_usd = evo_tokens * per_token
        if spec.budget.max_usd is not None:
            evo_usd = min(evo_usd, spec.budget.max_usd)
        usd = seeds * (evo_usd + n_test * per_call * per_token)
    return Estimate(calls, limit is None and not frozen, tokens, None if latency is None else calls * latency, usd,
                    local)


def _usd_per_token(solver: ModelSpec, pilot: Pilot | None) -> float | None:
    """Dollars per token at the solver's price and the pilot's share of input and output tokens; None without a
    price (a remote model whose table is all zero: unknown, not free) or without a pilot's tokens."""
    p = solver.price
    if p.input_per_mtok == p.output_per_mtok == 0:
        return 0.0 if solver.backend != "openai" else None
    if pilot is None or pilot.input_tokens + pilot.output_tokens == 0:
        return None
    paid = pilot.input_tokens * p.input_per_mtok + pilot.output_tokens * p.output_per_mtok
    return paid / 1e6 / (pilot.input_tokens + pilot.output_tokens)
