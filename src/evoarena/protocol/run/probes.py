"""Role probes before a run: every (method, update role) a spec uses sends its method's canned update situations to
the role's model, through ledgered and cached RoleModels (phase "probe", outside every cell and budget); each reply is
judged by the method's own parser. Verdicts are kept in the run store and reused on resume."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from evoarena.api import Benchmark, Method, Probe, Reply, Verdict
from evoarena.models import (
    Backend,
    CallScope,
    GenParams,
    Message,
    ModelCallError,
    ResponseCache,
    RoleModel,
)
from evoarena.protocol import catalog
from evoarena.protocol.roles import role_map, role_params
from evoarena.protocol.validate import validate_spec
from evoarena.report.probes import DEFAULT_THRESHOLD, ProbeSummary, summarise
from evoarena.spec import ExperimentSpec
from evoarena.store import RunStore
from evoarena.store.probes import ProbeRow, probe_row, probe_rows, record_probe

__all__ = ["DEFAULT_THRESHOLD", "PlannedProbe", "ProbeSummary", "plan_probes", "probe_spec",
           "run_probes"]

PROBE_MAX_TOKENS = 512
"""The cap on a probe reply's length: probes stay cheap; a method's own larger limit is cut to this."""


@dataclass(frozen=True)
class PlannedProbe:
    """One probe of one method for one role's model, with the conditions it stands for."""

    method: str
    model: str
    probe: Probe
    params: GenParams
    conditions: tuple[str, ...]

    @property
    def key(self) -> str:
        blob = json.dumps([self.method, self.probe.role, self.model, self.probe.name, self.probe.prompt,
                           self.params.ledger_form()], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:32]


def plan_probes(
    spec: ExperimentSpec, methods: Mapping[str, type[Method]], benchmark: type[Benchmark],
    *, max_tokens: int = PROBE_MAX_TOKENS,
) -> list[PlannedProbe]:
    """Every distinct probe of every condition's method, for the model its role maps to (first seed's params)."""
    examples = benchmark.probe_examples()
    planned: dict[str, PlannedProbe] = {}
    for m in spec.methods:
        cls = methods[m.condition]
        roles = role_map(spec, m, cls.roles)
        for probe in cls(**m.params).probes(examples):
            if probe.role not in roles:
                raise KeyError(f"{m.name}: probe {probe.name!r} asks role {probe.role!r}, not one of {cls.roles}")
            base = role_params(spec, probe.role, spec.seeds[0])
            params = replace(base, max_tokens=min(probe.max_tokens or base.max_tokens, max_tokens),
                             stop=base.stop if probe.stop is None else probe.stop)
            p = PlannedProbe(m.name, roles[probe.role], probe, params, (m.condition,))
            old = planned.get(p.key)
            planned[p.key] = p if old is None else replace(old, conditions=(*old.conditions, m.condition))
    return list(planned.values())


Notify = Callable[[PlannedProbe, Verdict], None]


def run_probes(
    spec: ExperimentSpec, planned: list[PlannedProbe], store: RunStore, cache: ResponseCache | None,
    backends: Mapping[str, Backend], *, notify: Notify | None = None,
) -> list[ProbeSummary]:
    """Send every planned probe not yet in `store` to its model and keep the verdict; the summaries of all of them
    (the stored ones reused, with the conditions of this plan)."""
    for p in planned:
        done = probe_row(store, p.key)
        if done is not None and done.error is None:  # a provider error is no verdict: asked again on resume
            if set(p.conditions) - set(done.conditions):
                record_probe(store, replace(done, conditions=tuple(sorted({*done.conditions, *p.conditions}))))
            continue
        verdict, tokens, call_id, error = _ask(spec, p, store, cache, backends[p.model])
        record_probe(store, ProbeRow(
            key=p.key, method=p.method, role=p.probe.role, model=p.model, probe=p.probe.name,
            conditions=p.conditions, well_formed=verdict.well_formed, usable=verdict.usable,
            reason=verdict.reason, tokens=tokens, call_id=call_id, error=error,
        ))  # fmt: skip
        if notify is not None:
            notify(p, verdict)
    keys = {p.key for p in planned}
    return summarise(r for r in probe_rows(store) if r.key in keys)


def _ask(
    spec: ExperimentSpec, p: PlannedProbe, store: RunStore, cache: ResponseCache | None, backend: Backend
) -> tuple[Verdict, int, int | None, str | None]:
    model = RoleModel(role=p.probe.role, model_name=p.model, backend=backend, spec=spec.models[p.model], store=store,
                      cache=cache, scope=CallScope(phase="probe", unit=f"{p.method}/{p.probe.name}"),
                      default_params=p.params)
    try:
        out = model.complete([Message("user", p.probe.prompt)], p.params)
    except ModelCallError as err:
        return Verdict(False, False, "provider error"), 0, None, str(err)
    reply = Reply(out.text, out.finish_reason, out.call_id)
    return p.probe.judge(reply), out.usage.input_tokens + out.usage.output_tokens, out.call_id, None


def probe_spec(
    spec: ExperimentSpec, run_dir: Path, *, search: tuple[Path, ...] = (), cache: ResponseCache | None = None,
    max_tokens: int = PROBE_MAX_TOKENS, notify: Notify | None = None,
) -> list[ProbeSummary]:
    """`evoarena probe-roles`: the spec checked, the backends of the probed roles made, the probes run into the run
    store at `run_dir` (where a later `evoarena run` of the same spec reuses them)."""
    resolved = validate_spec(spec, search)
    planned = plan_probes(spec, resolved.methods, resolved.benchmark, max_tokens=max_tokens)
    backends = {name: catalog.backend_of(spec, name, search) for name in dict.fromkeys(p.model for p in planned)}
    store = RunStore(run_dir)
    try:
        return run_probes(spec, planned, store, cache if cache is not None else ResponseCache(), backends,
                          notify=notify)
    finally:
        store.close()
