"""Check a whole spec against the catalog before anything is written: every name, every param, every policy.

Errors are one line naming the field (`methods.2.name: unknown method 'refelxion' — did you mean 'reflexion'? …`)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evoarena.api import Benchmark, Method, ParamError, UnknownName
from evoarena.protocol import catalog
from evoarena.protocol.confinement import check_confinement
from evoarena.spec import UPDATE_ROLE, ExperimentSpec, MethodSpec, SpecError
from evoarena.wording import listing, unknown


@dataclass(frozen=True)
class Resolved:
    """What a valid spec names: its benchmark class and one method class per condition."""

    benchmark: type[Benchmark]
    methods: dict[str, type[Method]]
    benchmark_params: Any = None
    """The benchmark's `Params` from the spec."""
    method_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Each condition's params as its method is built with them: the spec's, bound to the spec's directory
    (`Method.bind_params`)."""

    def params_of(self, m: MethodSpec) -> dict[str, Any]:
        """The params the condition's method is built with (the spec's own when it was not checked here)."""
        return self.method_params.get(m.condition, m.params)


def validate_spec(spec: ExperimentSpec, search: Iterable[Path] = ()) -> Resolved:
    """Resolve and check every name and param of `spec`; raise SpecError (one line) on the first problem."""
    search = tuple(search)
    try:
        bench = catalog.benchmark_class(spec.benchmark.name, search)
    except UnknownName as err:
        raise SpecError(f"benchmark.name: {err}") from None
    try:
        bench_params = bench.check_params(spec.benchmark.params)
    except ParamError as err:
        raise SpecError(str(err)) from None
    for role in bench.grader_roles(bench_params):
        if role not in spec.roles:
            raise SpecError(f"roles.{role}: the benchmark grades with a {role!r} model; map it in `roles:` "
                            f"({role}: <one of {listing(sorted(spec.models))}>)")
    methods: dict[str, type[Method]] = {}
    bound: dict[str, dict[str, Any]] = {}
    base = search[0] if search else Path.cwd()
    for i, m in enumerate(spec.methods):
        try:
            cls = catalog.method_class(m.name, search)
        except UnknownName as err:
            raise SpecError(f"methods.{i}.name: {err}") from None
        if cls.library is not None and cls.library_version() is None:
            raise SpecError(f"methods.{i}.name: {m.name} runs the {cls.library!r} library, which is not installed "
                            "(make install, or pip install 'evoarena[peers]')")
        try:
            bound[m.condition] = cls.bind_params(m.params, base)
            cls.check_params(bound[m.condition])
        except ParamError as err:
            raise SpecError(f"methods.{i}: {err}") from None
        methods[m.condition] = cls
    check_role_names(spec, methods, bench.grader_roles(bench_params))
    for key, model in spec.models.items():
        if model.backend == "scripted":
            try:
                catalog.policy(model.model, search)
            except UnknownName as err:
                raise SpecError(f"models.{key}.model: {err}") from None
    if spec.executor.kind == "ray" and importlib.util.find_spec("ray") is None:
        raise SpecError("executor.kind: ray needs Ray installed (pip install 'evoarena[ray]')")
    return Resolved(bench, methods, bench_params, bound)


def check_role_names(spec: ExperimentSpec, methods: Mapping[str, type[Method]], grader_roles: Iterable[str]) -> None:
    """Every role the spec maps (or gives `gen:` defaults) is one something plays: the solver, a grading role of the
    benchmark or a role of a method (`Method.roles`: one of the spec's, or — in `roles:` and `gen:`, which a spec may
    share across method lists — any registered one); a method's own `roles:` only its roles, the solver's or a
    grading one; both may also map `update` (every update role not mapped by name). A misspelt role would otherwise
    be a mapping nobody reads, its role silently played by the solver's model."""
    graders = {"solver", *grader_roles}
    here = graders.union(*(cls.roles for cls in methods.values()))
    anywhere = here.union(*(getattr(e.obj, "roles", ()) for e in catalog.entries("method")))
    for section, names in (("roles", spec.roles), ("gen", spec.gen)):
        for role in names:
            if role not in anywhere and not (section == "roles" and role == UPDATE_ROLE):
                raise SpecError(f"{section}.{role}: {_unknown(role, sorted(here), sorted(anywhere))}")
    for i, m in enumerate(spec.methods):
        own = sorted(graders.union(methods[m.condition].roles))
        for role in m.roles:
            if role not in own and role != UPDATE_ROLE:
                raise SpecError(f"methods.{i}.roles.{role}: {unknown(f'{m.name} role', role, own, n=2)}")


def _unknown(role: str, known: list[str], close_to: list[str]) -> str:
    """`unknown role 'reflectr' — did you mean 'reflector'? (known: …)`: the closest names of `close_to`, then
    `known`."""
    return unknown("role", role, known, close_to=close_to, n=2)


def validate_run(spec: ExperimentSpec, search: Iterable[Path] = ()) -> Resolved:
    """`validate_spec`, and that the method isolation the spec promises works on this machine: what a run checks
    before it writes anything (a certified run without bubblewrap refuses to start, in one line)."""
    resolved = validate_spec(spec, search)
    check_confinement(spec)
    return resolved
