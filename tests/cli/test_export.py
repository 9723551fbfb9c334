"""`evoarena export` through the command line: each mode writes its files; errors are one line with exit code 2 and
leave DEST as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evoarena.cli import app

runner = CliRunner()
RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "arith-basics.yaml"


@pytest.fixture
def run_dir(arith_basics_run: Path) -> Path:
    return arith_basics_run


def test_each_mode(run_dir: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", str(run_dir), str(tmp_path / "p"), "--as", "prompt", "--cell", "boot"])
    assert result.exit_code == 0, result.output
    assert "exported bootstrap_fewshot__scripted__s0 version" in result.stdout and "(selected;" in result.stdout
    data = json.loads((tmp_path / "p" / "prompt.json").read_text())
    assert data["slot"] == "{task}" and data["source"]["cell"] == "bootstrap_fewshot__scripted__s0"
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["prompt.json", "prompt.txt"]
    result = runner.invoke(app, ["export", str(run_dir), str(tmp_path / "f"), "--as", "files", "--cell", "reflexion",
                                 "--version", "final"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "f" / "system.md").is_file() and (tmp_path / "f" / "memory" / "reflections.md").is_file()


@pytest.mark.parametrize(("args", "message"), [
    (["--as", "prompt"], "error: this run has 3 cells; pass --cell"),
    (["--as", "skill", "--cell", "reflexion"], "error: reflexion keeps no skill or playbook"),
    (["--as", "files", "--cell", "frozen", "--version", "0000"], "error: no harness version '0000'"),
])
def test_errors_exit_2_in_one_line(run_dir: Path, tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["export", str(run_dir), str(tmp_path / "out"), *args])
    assert result.exit_code == 2 and result.stderr.startswith(message) and result.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_an_existing_dest_needs_force(run_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x.txt").write_text("x")
    args = ["export", str(run_dir), str(tmp_path / "out"), "--as", "files", "--cell", "frozen"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "already holds files (pass --force" in result.stderr
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["x.txt"]
    assert runner.invoke(app, [*args, "--force"]).exit_code == 0 and (tmp_path / "out" / "system.md").is_file()


def test_cell_best(run_dir: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", str(run_dir), str(tmp_path / "b"), "--as", "files", "--cell", "best"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("exported reflexion__scripted__s0 version ") and "the best val" in result.stdout
