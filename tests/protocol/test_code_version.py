"""The code version a run records is asked of git once per process."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from evoarena import __version__
from evoarena.protocol.run import runner


def test_git_is_asked_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[Any] = []
    real = subprocess.run

    def counted(*args: Any, **kwargs: Any) -> Any:
        asked.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(runner.subprocess, "run", counted)
    runner.code_version.cache_clear()
    try:
        first = runner.code_version()
        assert runner.code_version() == first and first.startswith(__version__)
        assert [cmd[1] for cmd in asked] == ["rev-parse", "status"]
    finally:
        runner.code_version.cache_clear()
