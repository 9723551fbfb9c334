"""A model that returns its prompt fails every role probe of every registered method that has probes."""

from __future__ import annotations

import pytest

import evoarena.methods  # noqa: F401  # registers the built-in methods
from evoarena.api import GENERIC_EXAMPLES, Method, Reply
from evoarena.api.registry import REGISTRY

PROBED = [n for n in REGISTRY.names("method") if REGISTRY.get("method", n).probes is not Method.probes]
"""The methods that declare probes (a method without them may need params to exist at all, as `reference`)."""


def test_the_registry_has_methods_with_probes() -> None:
    assert {"ace", "gepa", "reflexion", "dynamic_cheatsheet", "evoskill", "tf_grpo", "reasoning_bank"} <= set(PROBED)


@pytest.mark.parametrize("name", PROBED)
def test_an_echo_model_fails_every_probe(name: str) -> None:
    for probe in REGISTRY.get("method", name)().probes(GENERIC_EXAMPLES):
        verdict = probe.judge(Reply(probe.prompt, "stop"))
        assert not verdict.usable, f"{name}: probe {probe.name} passed an echo of its prompt"
