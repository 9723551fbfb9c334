"""Check a whole spec against the catalog before anything is written: every name, every param, every policy.

Errors are one line naming the field (`methods.2.name: unknown method 'refelxion' (did you mean reflexion?) …`)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from evoarena.api import Benchmark, Method, ParamError, UnknownName
from evoarena.protocol import catalog
from evoarena.protocol.confinement import check_confinement
from evoarena.spec import ExperimentSpec, SpecError


@dataclass(frozen=True)
class Resolved:
    """What a valid spec names: its benchmark class and one method class per condition."""

    benchmark: type[Benchmark]
    methods: dict[str, type[Method]]


def validate_spec(spec: ExperimentSpec, search: Iterable[Path] = ()) -> Resolved:
    """Resolve and check every name and param of `spec`; raise SpecError (one line) on the first problem."""
    search = tuple(search)
    try:
        bench = catalog.benchmark_class(spec.benchmark.name, search)
    except UnknownName as err:
        raise SpecError(f"benchmark.name: {err}") from None
    try:
        bench.check_params(spec.benchmark.params)
    except ParamError as err:
        raise SpecError(str(err)) from None
    for role in bench.grader_roles(spec.benchmark.params):
        if role not in spec.roles:
            raise SpecError(f"roles.{role}: the benchmark grades with a {role!r} model; map it in `roles:` "
                            f"({role}: <one of {', '.join(sorted(spec.models))}>)")
    methods: dict[str, type[Method]] = {}
    for i, m in enumerate(spec.methods):
        try:
            cls = catalog.method_class(m.name, search)
        except UnknownName as err:
            raise SpecError(f"methods.{i}.name: {err}") from None
        try:
            cls.check_params(m.params)
        except ParamError as err:
            raise SpecError(f"methods.{i}: {err}") from None
        methods[m.condition] = cls
    for key, model in spec.models.items():
        if model.backend == "scripted":
            try:
                catalog.policy(model.model, search)
            except UnknownName as err:
                raise SpecError(f"models.{key}.model: {err}") from None
    if spec.executor.kind == "ray" and importlib.util.find_spec("ray") is None:
        raise SpecError("executor.kind: ray needs Ray installed (pip install 'evoarena[ray]')")
    return Resolved(bench, methods)


def validate_run(spec: ExperimentSpec, search: Iterable[Path] = ()) -> Resolved:
    """`validate_spec`, and that the method isolation the spec promises works on this machine: what a run checks
    before it writes anything (a certified run without bubblewrap refuses to start, in one line)."""
    resolved = validate_spec(spec, search)
    check_confinement(spec)
    return resolved
