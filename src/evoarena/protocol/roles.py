"""A role's generation defaults: the spec's `gen:` entry for it, with the seed its calls use. One rule for the cells'
roles, the role probes, the grading roles and the exported prompt, so they cannot drift apart."""

from __future__ import annotations

from typing import Any

from evoarena.models import GenParams
from evoarena.spec import ExperimentSpec


def role_params(spec: ExperimentSpec, role: str, seed: int) -> GenParams:
    """The role's default generation params in the spec (`gen:`), seeded with `seed` unless `gen:` fixes one."""
    gen: dict[str, Any] = dict(spec.gen.get(role, {}))
    gen["stop"] = tuple(gen.get("stop", ()))
    return GenParams(**{"seed": seed, **gen})
