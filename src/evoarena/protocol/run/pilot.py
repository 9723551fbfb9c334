"""The pilot: the baseline's initial harness (what `frozen` runs) on the first N test tasks with the spec's own solver
model and first seed, before a run spends anything. Its calls go through the response cache — a later run's frozen
test calls with that seed are the same calls and are read back, not paid again — and are ledgered (phase "pilot") in
a run directory of the pilot's own under `runs/pilots/`, never in a run's."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from evoarena.codec import from_plain, to_text
from evoarena.methods.frozen import Frozen
from evoarena.models import CallScope, Halt, ResponseCache, RoleModel
from evoarena.protocol.roles import role_params
from evoarena.protocol.run.cell_work import build_parts
from evoarena.protocol.run.evaluate import Evaluator
from evoarena.protocol.run.grading import bind_grading, grading_roles
from evoarena.protocol.run.runner import code_version
from evoarena.protocol.splits import task_rows
from evoarena.protocol.validate import validate_run
from evoarena.report.stats import mean
from evoarena.sandbox import isolation_level
from evoarena.spec import ExperimentSpec, MethodSpec, safe_name
from evoarena.store import RunStore, now_iso
from evoarena.store.queries import calls

PILOT_PHASE = "pilot"
PILOT_FILE = "pilot.json"
PILOTS_ROOT = Path("runs") / "pilots"


@dataclass(frozen=True)
class Pilot:
    """What a pilot measured: the baseline's per-task scores on its tasks and what its solver calls cost."""

    model: str
    seed: int
    task_ids: list[str]
    scores: list[float]  # graded tasks only, in task order
    errors: int
    calls: int  # the solver's calls of this pilot (cached ones too)
    cached_calls: int
    input_tokens: int
    output_tokens: int
    call_latency_s: float | None  # median over every paid pilot call of its directory (cached calls take no time)

    @property
    def n(self) -> int:
        return len(self.scores)

    @property
    def mean(self) -> float:
        return mean(self.scores)

    def tokens_per_call(self) -> float | None:
        return (self.input_tokens + self.output_tokens) / self.calls if self.calls else None


def pilot_spec(spec: ExperimentSpec, search: tuple[Path, ...] = ()) -> ExperimentSpec:
    """The spec a pilot runs: `frozen` alone with the baseline condition's solver model, the first seed, and the
    benchmark's grading roles as the spec maps them."""
    base = spec.methods[0]
    roles = spec.roles_for(base)
    solver = roles.get("solver", next(iter(roles.values())))
    graders = grading_roles(spec, validate_run(spec, search).benchmark)
    keep = {"solver": solver, **{r: spec.roles[r] for r in graders}}
    return spec.model_copy(update={
        "name": f"{spec.name}-pilot", "methods": [MethodSpec(name="frozen")], "seeds": [spec.seeds[0]],
        "models": {m: spec.models[m] for m in dict.fromkeys(keep.values())}, "roles": keep,
        "gen": {r: g for r, g in spec.gen.items() if r in keep},
    })


def pilot_dir(spec: ExperimentSpec, search: tuple[Path, ...] = (), root: Path = PILOTS_ROOT) -> Path:
    """Where the pilot of `spec` is kept: `runs/pilots/<name>-<hash of the pilot's spec>`."""
    return root / f"{safe_name(spec.name)}-{pilot_spec(spec, search).spec_hash()[:10]}"


def cached_pilot(spec: ExperimentSpec, search: tuple[Path, ...] = (), root: Path = PILOTS_ROOT) -> Pilot | None:
    """The last pilot run for `spec`, if there is one (no model call)."""
    path = pilot_dir(spec, search, root) / PILOT_FILE
    return from_plain(Pilot, _json(path)) if path.is_file() else None


def run_pilot(spec: ExperimentSpec, n: int, *, search: tuple[Path, ...] = (), root: Path = PILOTS_ROOT,
              cache: ResponseCache | None = None) -> Pilot:
    """Grade the baseline's initial harness on the first `n` test tasks; keep the result in the pilot's directory."""
    if n < 1:
        raise ValueError(f"--pilot: at least 1 task, got {n}")
    pspec = pilot_spec(spec, search)
    parts = build_parts(pspec, search)
    where = pilot_dir(spec, search, root)
    store = RunStore(where)
    spec_hash = pspec.spec_hash()
    store.upsert_run(id=spec_hash[:16], name=pspec.name, spec_json=pspec.model_dump_json(), spec_hash=spec_hash,
                     code_version=code_version(), evidence=pspec.derived_evidence(), test_hash=parts.locked.hash,
                     isolation=isolation_level(), status="running", started_at=now_iso(), finished_at=None)
    store.record_tasks(task_rows(parts.tasks))
    cache = cache if cache is not None else ResponseCache()
    halt = Halt()
    bind_grading(pspec, parts.benchmark, parts.backends, store, cache, halt)
    seed, solver_name = pspec.seeds[0], pspec.roles["solver"]
    solver = RoleModel(role="solver", model_name=solver_name, backend=parts.backends[solver_name],
                       spec=pspec.models[solver_name], store=store, cache=cache,
                       scope=CallScope(phase=PILOT_PHASE, unit=f"{PILOT_PHASE}/n{n}"),
                       default_params=role_params(pspec, "solver", seed), halt=halt)
    method = Frozen()
    from evoarena.harness.workspace import HarnessWorkspace

    ws = HarnessWorkspace(where / "harness", pspec.protocol.harness)
    ws.replace_all({})
    method.initialize(ws, parts.benchmark.system_prompt(), parts.benchmark.solver_params())
    ids = [t.id for t in parts.tasks if t.split == "test"][:n]
    before = max((c.id for c in calls(store)), default=0)
    rows = Evaluator(parts.locked, parts.benchmark).grade_ids(
        method, ws.tree(), {"solver": solver}, ids, version_id="pilot", workers=pspec.protocol.workers)
    mine = [c for c in calls(store, phase=PILOT_PHASE) if c.id > before and c.role == "solver"]
    paid = [c for c in calls(store, phase=PILOT_PHASE) if not c.cached and c.error is None and c.role == "solver"]
    pilot = Pilot(
        model=solver_name, seed=seed, task_ids=ids, scores=[r.score for r in rows if r.score is not None],
        errors=sum(r.score is None for r in rows), calls=len(mine), cached_calls=sum(c.cached for c in mine),
        input_tokens=sum(c.input_tokens for c in mine), output_tokens=sum(c.output_tokens for c in mine),
        call_latency_s=statistics.median(c.latency_s for c in paid) if paid else None,
    )
    if not pilot.scores:
        raise RuntimeError(f"pilot: no task of {len(ids)} was graded ({pilot.errors} errors); see {where}")
    (where / PILOT_FILE).write_text(to_text(pilot, indent=2, sort_keys=True) + "\n", "utf-8")
    store.update_run(spec_hash[:16], status="finished", finished_at=now_iso())
    return pilot


def _json(path: Path) -> object:
    import json

    return json.loads(path.read_text("utf-8"))
