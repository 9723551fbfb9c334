"""Build backends from a spec. A scripted model's policy is resolved by the caller (the protocol's catalog), so
this floor never names a benchmark or a policy package."""

from __future__ import annotations

from collections.abc import Callable

from evoarena.models.base import Backend
from evoarena.models.scripted import Policy, ScriptedBackend
from evoarena.spec import ModelSpec


def build_backend(spec: ModelSpec, policy: Callable[[str], Policy] | None = None) -> Backend:
    """The backend for `spec`; `policy(name)` resolves a scripted model's policy."""
    if spec.backend == "scripted":
        if policy is None:
            raise ValueError("a scripted model needs a policy resolver (evoarena.protocol.catalog.policy)")
        return ScriptedBackend(spec.model, policy(spec.model))
    if spec.backend == "openai":
        from evoarena.models.openai_backend import OpenAIBackend

        return OpenAIBackend(spec)
    from evoarena.models.embedded import EmbeddedBackend

    return EmbeddedBackend(spec)
