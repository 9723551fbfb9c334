"""One scripted arith-basics run shared by the CLI tests that only read it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evoarena.cli import app

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "arith-basics.yaml"


@pytest.fixture(scope="session")
def arith_basics_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("arith-basics") / "run"
    result = CliRunner().invoke(app, ["run", str(RECIPE), "--model", "scripted", "--run-dir", str(target), "--json"])
    assert result.exit_code == 0, result.output
    return target
