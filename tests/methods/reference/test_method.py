"""`reference`: the given harness is installed as it is (a prompt, files or a directory read against the spec's
directory), never changed, and every bad source fails in one line before a run directory exists."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from evoarena.api import ParamError
from evoarena.harness import HarnessWorkspace
from evoarena.methods.reference import Reference
from evoarena.models import GenParams
from evoarena.protocol.run.runner import run_experiment
from evoarena.protocol.validate import validate_spec
from evoarena.spec import SpecError


def _installed(tmp_path: Path, **params: Any) -> dict[str, str]:
    ws = HarnessWorkspace(tmp_path / "harness")
    Reference(**params).initialize(ws, "the benchmark's prompt", GenParams())
    return ws.tree()


@pytest.mark.parametrize(("params", "says"), [
    ({}, "give the harness"),
    ({"files": {"a.md": "x"}, "dir": "d"}, "not both"),
    ({"system": "s", "files": {"system.md": "t"}}, "has a system.md too"),
    ({"files": {"../up.md": "x"}}, "files:"),
    ({"files": {"/abs.md": "x"}}, "files:"),
    ({"sytem": "s"}, "unknown param 'sytem'"),
])
def test_a_bad_source_is_one_line(params: dict[str, Any], says: str) -> None:
    with pytest.raises(ParamError) as err:
        Reference(**params)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_a_prompt_replaces_the_benchmarks_and_files_are_shown_before_the_task(tmp_path: Path) -> None:
    tree = _installed(tmp_path, system="Be exact.")
    assert tree["system.md"] == "Be exact." and "harness.toml" in tree
    tree = _installed(tmp_path / "b", files={"notes/rules.md": "Multiply groups.\n", "empty.md": " "})
    assert tree["system.md"] == "the benchmark's prompt" and tree["notes/rules.md"] == "Multiply groups.\n"
    task = SimpleNamespace(id="t", prompt="p")
    assert Reference(system="s").context(tree, task) == "### notes/rules.md\nMultiply groups."  # type: ignore[arg-type]


def test_a_directory_is_read_against_the_spec_directory(tmp_path: Path) -> None:
    (tmp_path / "best" / "skills").mkdir(parents=True)
    (tmp_path / "best" / "system.md").write_text("Best prompt.")
    (tmp_path / "best" / "skills" / "a.md").write_text("A rule.")
    bound = Reference.bind_params({"dir": "best"}, tmp_path)
    assert bound == {"files": {"system.md": "Best prompt.", "skills/a.md": "A rule."}}
    tree = _installed(tmp_path / "run", **bound)
    assert tree["system.md"] == "Best prompt." and tree["skills/a.md"] == "A rule."
    (tmp_path / "hollow").mkdir()
    for raw, says in (("missing", "no such directory 'missing'"), ("hollow", "holds no files")):
        with pytest.raises(ParamError, match=says):
            Reference.bind_params({"dir": raw}, tmp_path)


def test_practice_solves_once_and_changes_nothing() -> None:
    solved: list[Any] = []
    ctx = SimpleNamespace(solve=solved.append)
    assert Reference(system="s").practice(ctx, SimpleNamespace(id="t")) is None  # type: ignore[arg-type]
    assert len(solved) == 1 and Reference.roles == ("solver",)


def test_a_missing_directory_stops_the_spec_before_a_run_directory(tmp_path: Path, make_spec: Any) -> None:
    spec = make_spec(methods=[{"name": "frozen"}, {"name": "reference", "params": {"dir": "nowhere"}}])
    with pytest.raises(SpecError) as err:
        validate_spec(spec, (tmp_path,))
    assert str(err.value).startswith("methods.1: methods.reference.params.dir: no such directory 'nowhere'")
    with pytest.raises(SpecError):
        run_experiment(spec, tmp_path / "run", search=(tmp_path,))
    assert not (tmp_path / "run").exists()
