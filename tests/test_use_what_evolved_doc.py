"""docs/use-what-evolved.md is true: its commands, run from a directory holding the recipes, export arith-basics'
prompt; its Python blocks (loading that prompt back, and `evoarena.evolve` on arith) then run as the page shows."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "use-what-evolved.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", DOC.read_text("utf-8"), re.S | re.M)


def test_the_pages_commands_and_python_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(ROOT / "recipes", tmp_path / "recipes")
    commands = [ln for b in blocks("bash") for ln in b.splitlines() if ln.startswith("evoarena ") and "[" not in ln]
    assert [c.split()[1] for c in commands] == ["run", "export"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for command in commands:
        script = f'evoarena() {{ "{sys.executable}" -m evoarena.cli "$@"; }}\n{command}\n'
        done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env=env)
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "prompt" / "prompt.json").is_file()
    monkeypatch.chdir(tmp_path)
    load, evolve = blocks("python")
    space: dict[str, object] = {}
    exec(compile(load, "use-what-evolved.md: load_prompt", "exec"), space)
    messages = space["messages"]
    assert isinstance(messages, list) and messages[-1].content.endswith("How many pens does Tom have now?\nA:")
    exec(compile(evolve, "use-what-evolved.md: evolve", "exec"), space)  # its own assert checks the scores
    assert list((tmp_path / "runs").glob("evolve-bootstrap_fewshot-*/results.json"))
