"""BPE tests' TextWorld game cache, shared by the belief tests and the household recipe."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tw_games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One TextWorld game cache for this module's tests (a household game costs 1–2 s to generate)."""
    pytest.importorskip("textworld", reason="textworld is not installed: pip install 'evoarena[envs]'")
    return tmp_path_factory.mktemp("bpe_games")


@pytest.fixture
def games(tw_games: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("EVOARENA_TEXTWORLD_DIR", str(tw_games))
    yield tw_games

