"""Grading a finished run's stored versions on its locked test split again, after the run: the run reopened from its
stored spec (its benchmark built again, the test split's hash checked against the run's) and one committed unit per
grading, so a second call reads it back. What `evoarena transfer` and `evoarena curve` share."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from evoarena.api import Method
from evoarena.harness import load_tree
from evoarena.models import Backend, CallScope, Halt, ResponseCache, RoleModel
from evoarena.protocol.roles import role_map, role_params
from evoarena.protocol.run.cell_work import RunParts, build_parts
from evoarena.protocol.run.evaluate import Evaluator
from evoarena.protocol.run.grading import bind_grading, grading_roles
from evoarena.spec import ExperimentSpec, ModelSpec, SpecError
from evoarena.store import AttemptRow, RunStore, queries
from evoarena.store.calls import errors_since, last_call_id
from evoarena.store.queries import CellRow


@dataclass
class Reopened:
    """A finished run ready to grade on its test split: its store, spec, parts, evaluator, cache and halt."""

    store: RunStore
    spec: ExperimentSpec
    parts: RunParts
    evaluator: Evaluator
    cache: ResponseCache
    halt: Halt

    def finished_cells(self) -> list[CellRow]:
        """The cells that ended with a selected version, by condition, model and seed."""
        conditions = {m.condition for m in self.spec.methods}
        return sorted((c for c in queries.cells(self.store) if c.status == "done" and c.selected_version is not None
                       and c.condition in conditions), key=lambda c: (c.condition, c.model, c.seed))

    def grade(self, cell: CellRow, version: str, *, phase: str, unit: str,
              play: Mapping[str, tuple[str, Backend, ModelSpec]] | None = None) -> list[AttemptRow]:
        """Grade `version` of `cell` on the whole test split in `phase`, as unit `unit` (not yet committed). Each
        role the condition's solver side plays is the cell's own model, or `play`'s (role → name, backend, spec) —
        `{"*": …}` for every role; the benchmark's judge keeps its own. A provider error stops it when the spec says
        so, before anything is kept."""
        spec, parts = self.spec, self.parts
        mspec = next(m for m in spec.methods if m.condition == cell.condition)
        method_cls = parts.resolved.methods[cell.condition]
        graders = set(grading_roles(spec, type(parts.benchmark)))
        scope = CallScope(cell=cell.cell, phase=phase, unit=unit, batch=True)
        models = {}
        for role, name in role_map(spec, mspec, method_cls.roles).items():
            if role in graders:
                continue
            name, backend, model = (play or {}).get("*") or (play or {}).get(role) or (
                name, parts.backends[name], spec.models[name])
            models[role] = RoleModel(role=role, model_name=name, backend=backend, spec=model, store=self.store,
                                     cache=self.cache, scope=scope, default_params=role_params(spec, role, cell.seed),
                                     halt=self.halt)
        method: Method = method_cls(**mspec.params)
        since = last_call_id(self.store)
        rows = self.evaluator.grade_test(method, load_tree(self.store, version), models, version_id=version,
                                         workers=spec.protocol.workers, phase=phase)
        failed = errors_since(self.store, cell.cell, since, unit=unit)
        if failed and spec.protocol.on_provider_error == "stop":
            raise RuntimeError(f"{len(failed)} model call(s) failed after retries in {cell.cell} {unit} (last: "
                               f"{failed[-1]}). Nothing of it was kept; run the same command again.")
        return rows


def reopen(run_dir: Path, *, search: tuple[Path, ...] = (), cache: ResponseCache | None = None) -> Reopened:
    """The run in `run_dir`, its benchmark built again; a one-line SpecError when there is none or when its test split
    no longer hashes as it did (the grading would not be of the same tasks)."""
    store = RunStore(run_dir)
    run = queries.run(store)
    if run is None:
        raise SpecError(f"{run_dir}: no run here")
    spec = ExperimentSpec.model_validate_json(run.spec_json)
    parts = build_parts(spec, search)
    if parts.locked.hash != run.test_hash:
        raise SpecError(f"{run_dir}: the benchmark's test split changed since the run (test hash "
                        f"{parts.locked.hash[:12]} ≠ {(run.test_hash or '')[:12]}); a grading after the run must "
                        "be of the same tasks")
    cache = cache if cache is not None else ResponseCache()
    halt = Halt()
    bind_grading(spec, parts.benchmark, parts.backends, store, cache, halt)
    return Reopened(store, spec, parts, Evaluator(parts.locked, parts.benchmark), cache, halt)
