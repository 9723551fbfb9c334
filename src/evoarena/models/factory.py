"""Build backends and role models from a spec."""

from __future__ import annotations

from evoarena.models.base import Backend
from evoarena.models.scripted import ScriptedBackend
from evoarena.spec import ModelSpec


def build_backend(spec: ModelSpec) -> Backend:
    if spec.backend == "scripted":
        return ScriptedBackend(spec.model)
    if spec.backend == "openai":
        from evoarena.models.openai_backend import OpenAIBackend

        return OpenAIBackend(spec)
    from evoarena.models.embedded import EmbeddedBackend

    return EmbeddedBackend(spec)
