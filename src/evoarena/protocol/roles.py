"""Which model plays each role of a condition, and each role's generation defaults (the spec's `gen:` entry, with the
seed its calls use): one rule for the cells, the role probes, the grading roles and the exported prompt."""

from __future__ import annotations

from typing import Any

from evoarena.models import GenParams
from evoarena.spec import ExperimentSpec, MethodSpec


def role_params(spec: ExperimentSpec, role: str, seed: int) -> GenParams:
    """The role's default generation params in the spec (`gen:`), seeded with `seed` unless `gen:` fixes one."""
    gen: dict[str, Any] = dict(spec.gen.get(role, {}))
    gen["stop"] = tuple(gen.get("stop", ()))
    return GenParams(**{"seed": seed, **gen})


def role_map(spec: ExperimentSpec, m: MethodSpec, roles: tuple[str, ...]) -> dict[str, str]:
    """Every role a condition uses -> model name: the spec's mapping, the solver's model for unmapped roles."""
    mapped = spec.roles_for(m)
    fallback = mapped.get("solver", next(iter(mapped.values())))
    return {**{r: fallback for r in sorted(roles)}, **mapped}
