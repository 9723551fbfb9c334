"""Shared fixtures: every test gets its own response cache, and a small scripted spec to run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evoarena.spec import ExperimentSpec, parse_spec


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache_dir = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("EVOARENA_CACHE_DIR", str(cache_dir))
    return cache_dir


def small_spec(**overrides: Any) -> ExperimentSpec:
    data: dict[str, Any] = {
        "name": "small",
        "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 6, "n_val": 5, "n_test": 10}},
        "methods": [{"name": "frozen"}, {"name": "reflexion"}, {"name": "bootstrap_fewshot",
                                                              "params": {"max_labeled_demos": 4}}],
        "models": {"scripted": {"backend": "scripted", "model": "arith-student"}},
        "roles": {"solver": "scripted", "reflector": "scripted"},
        "seeds": [0],
    }
    data.update(overrides)
    return parse_spec(data)


@pytest.fixture
def spec() -> ExperimentSpec:
    return small_spec()


@pytest.fixture
def make_spec() -> Any:
    return small_spec
