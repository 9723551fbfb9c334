"""Transfer: each finished cell's selected harness graded by another model on the run's own locked test split.

The run's benchmark is built again from its stored spec and its test split must hash as it did (`runs.test_hash`);
every role the condition's solver side uses is played by the other model. Each cell's grading is one unit
(`transfer/<model>`, phase "transfer") committed with its attempts, so a second call reads it back, and its calls go
through the response cache. The test split stays locked: only the Evaluator opens it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evoarena.codec import from_plain, to_plain
from evoarena.harness import load_tree
from evoarena.models import CallScope, Halt, ResponseCache, RoleModel
from evoarena.protocol import catalog
from evoarena.protocol.roles import role_map, role_params
from evoarena.protocol.run.cell_work import build_parts
from evoarena.protocol.run.evaluate import Evaluator, mean_score
from evoarena.protocol.run.grading import bind_grading, grading_roles
from evoarena.spec import ExperimentSpec, ModelSpec, SpecError
from evoarena.store import RunStore, queries
from evoarena.store.calls import errors_since, last_call_id

TRANSFER_PHASE = "transfer"


@dataclass(frozen=True)
class TransferResult:
    """One cell's selected version graded by `model` on the test split: what its `transfer/<model>` unit keeps."""

    model: str
    version: str
    mean: float


@dataclass(frozen=True)
class TransferCell:
    """What `run_transfer` did for one cell: its result, and whether it was read back rather than graded now."""

    cell: str
    condition: str
    evolved_on: str
    seed: int
    result: TransferResult
    reused: bool


def unit_key(model: str) -> str:
    return f"{TRANSFER_PHASE}/{model}"


def transfer_model(spec: ExperimentSpec, name: str) -> tuple[str, ModelSpec]:
    """The model `name` means for a run of `spec`: one of its `models`, else a `--model` shorthand as `evoarena run`
    takes it (`embedded`, `embedded-small`, `gemma`, a `.gguf`, `scripted`); a one-line SpecError otherwise."""
    if name in spec.models:
        return name, spec.models[name]
    mapped = spec.with_model(name)
    key = next(iter(mapped.roles.values()), name)
    return key, mapped.models[key]


def run_transfer(run_dir: Path, model: str, *, search: tuple[Path, ...] = (),
                 cache: ResponseCache | None = None) -> list[TransferCell]:
    """Grade every finished cell's selected version with `model` on the run's test split (cells graded before are
    read back). A run whose test split no longer hashes as it did is refused before any call."""
    store = RunStore(run_dir)
    run = queries.run(store)
    if run is None:
        raise SpecError(f"{run_dir}: no run here")
    spec = ExperimentSpec.model_validate_json(run.spec_json)
    key, mspec = transfer_model(spec, model)
    parts = build_parts(spec, search)
    if parts.locked.hash != run.test_hash:
        raise SpecError(f"{run_dir}: the benchmark's test split changed since the run (test hash "
                        f"{parts.locked.hash[:12]} ≠ {(run.test_hash or '')[:12]}); a transfer grades the same tasks")
    backend = catalog.backend_of(spec.model_copy(update={"models": {**spec.models, key: mspec}}), key, search)
    cache = cache if cache is not None else ResponseCache()
    halt = Halt()
    bind_grading(spec, parts.benchmark, parts.backends, store, cache, halt)
    graders = set(grading_roles(spec, type(parts.benchmark)))
    evaluator = Evaluator(parts.locked, parts.benchmark)
    methods = {m.condition: m for m in spec.methods}
    out: list[TransferCell] = []
    for c in sorted(queries.cells(store), key=lambda c: (c.condition, c.model, c.seed)):
        if c.status != "done" or c.selected_version is None or c.condition not in methods:
            continue
        ukey = unit_key(key)
        stored = store.unit_result(c.cell, ukey)
        if stored is not None:
            out.append(TransferCell(c.cell, c.condition, c.model, c.seed, from_plain(TransferResult, stored), True))
            continue
        mspec_cell = methods[c.condition]
        method_cls = parts.resolved.methods[c.condition]
        scope = CallScope(cell=c.cell, phase=TRANSFER_PHASE, unit=ukey, batch=True)
        models = {role: RoleModel(role=role, model_name=key, backend=backend, spec=mspec, store=store, cache=cache,
                                  scope=scope, default_params=role_params(spec, role, c.seed), halt=halt)
                  for role in role_map(spec, mspec_cell, method_cls.roles) if role not in graders}
        since = last_call_id(store)
        rows = evaluator.grade_test(method_cls(**mspec_cell.params), load_tree(store, c.selected_version), models,
                                    version_id=c.selected_version, workers=spec.protocol.workers,
                                    phase=TRANSFER_PHASE)
        failed = errors_since(store, c.cell, since, unit=ukey)
        if failed and spec.protocol.on_provider_error == "stop":
            raise RuntimeError(f"{len(failed)} model call(s) failed after retries in {c.cell} {ukey} (last: "
                               f"{failed[-1]}). Nothing of that cell's transfer was kept; run the same command again.")
        result = TransferResult(model=key, version=c.selected_version, mean=mean_score(rows))
        store.finish_unit(c.cell, ukey, to_plain(result), rows)
        out.append(TransferCell(c.cell, c.condition, c.model, c.seed, result, False))
    return out
