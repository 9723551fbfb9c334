"""TextWorld games for the environment tests: one cache directory per test session, so each tiny game is generated
once (about a second each) and every test that plays it reuses the files."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tw_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's TextWorld game cache; skips the test when textworld (the `envs` extra) is not installed."""
    pytest.importorskip("textworld", reason="textworld is not installed: pip install 'evoarena[envs]'")
    return tmp_path_factory.mktemp("tw_games")
