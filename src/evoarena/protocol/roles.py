"""Which model plays each role of a condition, and each role's generation defaults (the spec's `gen:` entry, with the
seed its calls use): one rule for the cells, the role probes, the grading roles and the exported prompt."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evoarena.models import GenParams
from evoarena.spec import UPDATE_ROLE, ExperimentSpec, MethodSpec


def role_params(spec: ExperimentSpec, role: str, seed: int) -> GenParams:
    """The role's default generation params in the spec (`gen:`), seeded with `seed` unless `gen:` fixes one."""
    gen: dict[str, Any] = dict(spec.gen.get(role, {}))
    gen["stop"] = tuple(gen.get("stop", ()))
    return GenParams(**{"seed": seed, **gen})


def role_map(spec: ExperimentSpec, m: MethodSpec, roles: tuple[str, ...]) -> dict[str, str]:
    """Every role a condition uses -> model name: the spec's mapping; an unmapped update role (any but the solver)
    played by the `update` entry's model when there is one, else — like an unmapped solver — by the solver's."""
    mapped = {r: model for r, model in spec.roles_for(m).items() if r != UPDATE_ROLE}
    solver = mapped.get("solver", next(iter(mapped.values()), spec.roles_for(m).get(UPDATE_ROLE, "")))
    update = spec.roles_for(m).get(UPDATE_ROLE, solver)
    return {**{r: solver if r == "solver" else update for r in sorted(roles)}, **mapped}


def role_lines(spec: ExperimentSpec, plays: Mapping[str, tuple[str, ...]], grader_roles: Sequence[str]) -> list[str]:
    """What a run says at its start about its roles: per condition (`plays`: condition -> the roles its method
    plays), which model plays each, marking the roles left unmapped that fall back to the solver's model; the
    benchmark's grading roles; and the roles `roles:` maps that nothing in this spec plays."""
    lines = []
    for m in spec.methods:
        mapped = spec.roles_for(m)
        models = role_map(spec, m, plays[m.condition])
        shown = [f"{r} → {models[r]}" + _source(r, mapped) for r in dict.fromkeys(plays[m.condition])]
        lines.append(f"{m.condition}: {', '.join(shown)}")
    if grader_roles:
        lines.append(f"grading: {', '.join(f'{r} → {spec.roles[r]}' for r in grader_roles if r in spec.roles)}")
    played = {r for roles in plays.values() for r in roles} | set(grader_roles)
    if any(r != "solver" for roles in plays.values() for r in roles):
        played.add(UPDATE_ROLE)
    idle = [r for r in spec.roles if r not in played]
    if idle:
        lines.append(f"mapped but played by no method here: {', '.join(idle)}")
    return lines


def _source(role: str, mapped: Mapping[str, str]) -> str:
    """How a role got its model, when not by its own entry: the `update` entry, or the solver's model."""
    if role in mapped:
        return ""
    if role != "solver" and UPDATE_ROLE in mapped:
        return " (update)"
    return " (unmapped: the solver's model)"
