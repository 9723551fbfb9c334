"""docs/own-tasks.md is true: its JSONL file, spec and scripted player, copied out of the page into an empty
directory, run with exactly the commands the page shows, and give a report with the numbers the page describes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import Feedback
from evoarena.benchmarks.files import FilesBenchmark
from evoarena.benchmarks.files.graders import make_grader

DOC = Path(__file__).resolve().parents[3] / "docs" / "own-tasks.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", DOC.read_text("utf-8"), re.S | re.M)


def write_page(where: Path) -> list[str]:
    """The page's files into `where`; returns its shell commands."""
    (where / "units.jsonl").write_text(blocks("jsonl")[0])
    (where / "units.yaml").write_text(blocks("yaml")[0])
    (where / "units_player.py").write_text(blocks("python")[0])
    return [line for line in blocks("bash")[0].splitlines() if line.strip()]


def sh(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """One of the page's commands in bash, `evoarena` being this interpreter's (so no install is needed)."""
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "COLUMNS": "200"}  # tables not cut
    script = f'evoarena() {{ "{sys.executable}" -m evoarena.cli "$@"; }}\n{command}\n'
    return subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def test_the_page_shows_a_20_line_jsonl_file() -> None:
    lines = blocks("jsonl")[0].splitlines()
    assert len(lines) == 20 and all(isinstance(json.loads(line), dict) for line in lines)


def test_the_page_runs_from_an_empty_directory(tmp_path: Path) -> None:
    commands = write_page(tmp_path)
    assert commands[0] == "evoarena run units.yaml --model scripted"
    done = sh(commands[0], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "evidence: mechanism" in done.stdout and "report.html" in done.stdout
    (run_dir,) = list((tmp_path / "runs").glob("units-*"))
    assert (run_dir / "report.html").is_file() and (run_dir / "run.sqlite").is_file()
    results: dict[str, Any] = json.loads((run_dir / "results.json").read_text())
    assert results["evidence"] == "mechanism"
    test = {c["condition"]: c["test"] for c in results["conditions"]}
    assert test["frozen"]["n_graded"] == test["reflexion"]["n_graded"] == 10
    assert 0.0 < test["frozen"]["mean"] < 1.0  # only the non-time questions, as the page says
    assert test["reflexion"]["mean"] == 1.0
    info = results["meta"]["extra"]["benchmark"]
    assert info["sizes"] == {"train": 6, "val": 4, "test": 10} and info["grader"] == "numeric"

    outputs = {}
    for command in commands[1:]:
        shown = sh(command, tmp_path)
        assert shown.returncode == 0, f"{command}: {shown.stderr}"
        outputs[command] = shown.stdout
    show, solver, reflector, exported = outputs.values()
    assert "frozen__scripted__s0" in show and "reflexion__scripted__s0" in show
    assert "How many minutes are in 2 hours?" in solver and "Answer: " in solver
    assert "Feedback: The answer 300 is not the expected value (tolerance: relative 0.01)." in reflector
    assert "Time does not go in hundreds" in reflector
    assert exported.startswith("exported reflexion__scripted__s0 ") and "the best val" in exported
    assert "Time does not go in hundreds" in (tmp_path / "best-prompt" / "prompt.txt").read_text()

    again = sh(commands[0], tmp_path)  # resumes: the same results, no new calls
    assert again.returncode == 0, again.stderr
    assert json.loads((run_dir / "results.json").read_text())["calls"] == results["calls"]


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    sys.modules.pop("my_grader", None)


def test_the_documented_function_grader(in_tmp: Path) -> None:
    source = [b for b in blocks("python") if b.startswith("# my_grader.py\n")][0]
    (in_tmp / "my_grader.py").write_text(source)
    params = {**FilesBenchmark.defaults, "pass_threshold": 0.5}
    grader = make_grader("my_grader:score", params, given=["pass_threshold"])
    assert grader.parse_mode == "full"
    assert grader.score("the cat sat", "cat on mat", {}) == Feedback(1 / 3, False, "1 of the expected words are there.")
    assert grader.score("a cat on a mat", "cat on mat", {}).passed
