"""Lending a benchmark's grader the models it grades with (an LLM judge): one ledgered, cached RoleModel per grading
role the spec maps, recorded in phase "grading" under the cell and unit being graded (`attributed`), outside every
budget. Methods never receive these."""

from __future__ import annotations

from collections.abc import Mapping

from evoarena.api import Benchmark
from evoarena.api.grading import GRADING_PHASE
from evoarena.models import Backend, CallScope, Halt, ResponseCache, RoleModel
from evoarena.protocol.roles import role_params
from evoarena.spec import ExperimentSpec
from evoarena.store import RunStore

GRADING_SEED = 0
"""Grading calls use one seed whatever the cell's, so that one answer gets one verdict in every cell."""


def grading_roles(spec: ExperimentSpec, benchmark: type[Benchmark]) -> tuple[str, ...]:
    """The roles the spec's benchmark grades with (empty for pure graders)."""
    return tuple(benchmark.grader_roles(benchmark.check_params(spec.benchmark.params)))


def bind_grading(spec: ExperimentSpec, benchmark: Benchmark, backends: Mapping[str, Backend], store: RunStore,
                 cache: ResponseCache | None, halt: Halt | None = None) -> dict[str, RoleModel]:
    """Bind a RoleModel for each grading role to `benchmark` (no meter: grading spends no method's budget); returns
    them. The spec check has made sure `roles:` maps every one."""
    models: dict[str, RoleModel] = {}
    for role in grading_roles(spec, type(benchmark)):
        name = spec.roles[role]
        models[role] = RoleModel(
            role=role, model_name=name, backend=backends[name], spec=spec.models[name], store=store, cache=cache,
            scope=CallScope(phase=GRADING_PHASE, ambient=True), default_params=role_params(spec, role, GRADING_SEED),
            halt=halt,
        )
    if models:
        benchmark.bind_grader(models)
    return models
