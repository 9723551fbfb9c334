"""What running a spec's cells needs, built the same way by the driver and by a remote worker: the checked spec with
its benchmark and locked test split (`RunParts`), and the function that runs one cell against a store (`cell_runner`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evoarena.api import Benchmark, Method, Task
from evoarena.models import Backend, Halt, ResponseCache, RoleModel
from evoarena.protocol import catalog
from evoarena.protocol.boundary.isolated import IsolatedMethod, isolated
from evoarena.protocol.confinement import isolation_record
from evoarena.protocol.progress import Progress
from evoarena.protocol.roles import role_map, role_params
from evoarena.protocol.run.cell import CellPlan, CellRunner
from evoarena.protocol.run.evaluate import Evaluator
from evoarena.protocol.run.schedules import schedule_for
from evoarena.protocol.run.units import UnitRunner
from evoarena.protocol.scheduler import Scheduler
from evoarena.protocol.splits import LockedTestSplit, PracticeSplits, split_tasks
from evoarena.protocol.validate import Resolved, validate_run
from evoarena.spec import ExperimentSpec, MethodSpec, SpecError
from evoarena.store import RunStore
from evoarena.store.run_events import write_event


@dataclass
class RunParts:
    """A checked spec and what it builds: the benchmark (locked by `build`), its splits and one backend per model."""

    spec: ExperimentSpec
    resolved: Resolved
    benchmark: Benchmark
    tasks: list[Task]
    practice: PracticeSplits
    locked: LockedTestSplit
    backends: dict[str, Backend]


def build_parts(spec: ExperimentSpec, search: tuple[Path, ...] = (), resolved: Resolved | None = None) -> RunParts:
    """Check `spec` whole (its method isolation included) unless the caller has (`resolved`: validate_run's answer
    for the same spec and search), build its benchmark and make its backends; a problem is a one-line `SpecError`."""
    resolved = resolved if resolved is not None else validate_run(spec, search)
    try:
        benchmark = resolved.benchmark(**spec.benchmark.params)
        tasks = benchmark.build()  # locks the benchmark: nothing can regenerate the test split after this
        practice, locked = split_tasks(tasks)
        check_reserve(spec, schedule_for(type(benchmark).schedule).reserve(practice, spec.protocol))
        for m in spec.methods:  # named update notes fail here, before any model call, if they are unknown
            for task in practice.train[:1]:
                benchmark.update_note(m.params.get("update_note"), task)
    except ValueError as err:
        raise SpecError(str(err)) from None
    backends: dict[str, Backend] = {}
    for model_name in dict.fromkeys(m for meth in spec.methods for m in spec.roles_for(meth).values()):
        backends[model_name] = catalog.backend_of(spec, model_name, search)
    return RunParts(spec, resolved, benchmark, list(tasks), practice, locked, backends)


def check_reserve(spec: ExperimentSpec, reserve: int) -> None:
    """A call budget must leave practice something once the calls selection needs are held back (ValueError)."""
    limit = spec.budget.max_calls
    if limit is not None and reserve and limit <= reserve:
        raise ValueError(
            f"budget.max_calls={limit} cannot pay for selection: grading the initial and the final version on val "
            f"takes {reserve} calls (one per val task each), leaving none for practice; raise budget.max_calls above "
            f"{reserve} or set protocol.select: last")


def plan_cells(spec: ExperimentSpec) -> list[CellPlan]:
    plans = []
    for seed in spec.seeds:
        for m in spec.methods:
            roles = spec.roles_for(m)
            solver = roles.get("solver", next(iter(roles.values())))
            plans.append(CellPlan(f"{m.condition}__{solver}__s{seed}", m.condition, m, solver, seed))
    return plans


def cell_runner(parts: RunParts, *, store: RunStore, evaluator: Evaluator, cache: ResponseCache, halt: Halt,
                scheduler: Scheduler, progress: Progress | None) -> Callable[[CellPlan], str]:
    """A function that runs (or resumes) one cell against `store` and returns its selected version; a failure sets
    `halt`, so that no other cell makes another model call."""
    spec = parts.spec

    def run_cell(plan: CellPlan) -> str:
        halt.check()  # a cell that starts after the run stopped does nothing
        method: Method | None = None
        try:
            method_cls = parts.resolved.methods[plan.condition]
            models = _role_models(spec, plan.method, method_cls, store, cache, parts.backends, plan.seed, halt,
                                  scheduler.calls)
            method = _method(spec, method_cls, parts.resolved.params_of(plan.method), plan, store.run_dir, cache)
            if isinstance(method, IsolatedMethod):
                write_event(store, isolation_record(spec.protocol.method_confinement, method.level), cell=plan.cell)
            units = UnitRunner(plan.cell, plan.seed, update_note=plan.method.params.get("update_note"), spec=spec,
                               store=store, benchmark=parts.benchmark, practice=parts.practice, evaluator=evaluator,
                               models=models, method=method, progress=progress, scheduler=scheduler)
            return CellRunner(plan, units).run()
        except BaseException as err:
            halt.set(f"{plan.cell}: {type(err).__name__}")
            raise
        finally:
            if isinstance(method, IsolatedMethod):
                method.close()

    return run_cell


def _method(spec: ExperimentSpec, method_cls: type[Method], params: dict[str, Any], plan: CellPlan, run_dir: Path,
            cache: ResponseCache) -> Method:
    """The cell's method: in the cell's thread, or (`protocol.isolation: process`) a stand-in for one in its own
    process at the spec's confinement; under bubblewrap its only writable directory is the cell's harness and it
    sees neither the run directory nor the response cache."""
    if spec.protocol.isolation == "in-process":
        return method_cls(**params)
    harness = Path(run_dir) / "cells" / plan.cell / "harness"
    return isolated(method_cls, params, harness=harness, masked=[Path(run_dir), cache.path.parent],
                    cpu_s=spec.protocol.method_cpu_s, confinement=spec.protocol.method_confinement)


def _role_models(
    spec: ExperimentSpec,
    method: MethodSpec,
    method_cls: type[Method],
    store: RunStore,
    cache: ResponseCache,
    backends: dict[str, Backend],
    seed: int,
    halt: Halt,
    in_flight: threading.Semaphore | None = None,
) -> dict[str, RoleModel]:
    """Every role the spec maps, plus any role a method needs: those fall back to the solver's model."""
    out: dict[str, RoleModel] = {}
    for role, model_name in role_map(spec, method, method_cls.roles).items():
        out[role] = RoleModel(
            role=role, model_name=model_name, backend=backends[model_name], spec=spec.models[model_name],
            store=store, cache=cache, default_params=role_params(spec, role, seed), halt=halt, in_flight=in_flight,
        )
    return out
