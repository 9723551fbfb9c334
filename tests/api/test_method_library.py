"""A method that runs a library's optimiser names the library: a spec naming it fails in one line when the library
is not installed, and the run records the library's version (results.json's meta, the report, `list methods`)."""

from __future__ import annotations

import json
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.protocol.run.runner import run_experiment
from evoarena.protocol.validate import validate_spec
from evoarena.spec import SpecError

METHODS = '''
from evoarena.api import Method, method
from evoarena.methods.frozen import Frozen


class OnPydantic(Frozen):
    library = "pydantic"


class OnNothing(Frozen):
    library = "no-such-distribution-evoarena"
'''


@pytest.fixture
def search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, ...]:
    (tmp_path / "libmethods.py").write_text(METHODS)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield (tmp_path,)
    sys.modules.pop("libmethods", None)


def test_a_missing_library_fails_the_spec_in_one_line(make_spec: Any, search: tuple[Path, ...],
                                                       tmp_path: Path) -> None:
    spec = make_spec(methods=[{"name": "frozen"}, {"name": "libmethods:OnNothing", "label": "lib"}])
    with pytest.raises(SpecError) as err:
        validate_spec(spec, search)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("methods.1.name:") and "'no-such-distribution-evoarena'" in message
    assert "evoarena[peers]" in message
    with pytest.raises(SpecError):
        run_experiment(spec, tmp_path / "run", search=search)
    assert not (tmp_path / "run").exists()


def test_the_run_records_the_library_and_its_version(make_spec: Any, search: tuple[Path, ...],
                                                      tmp_path: Path) -> None:
    spec = make_spec(methods=[{"name": "frozen"}, {"name": "libmethods:OnPydantic", "label": "lib"}])
    results = run_experiment(spec, tmp_path / "run", search=search)
    version = metadata.version("pydantic")
    assert results["meta"]["extra"]["libraries"] == {"lib": f"pydantic {version}"}
    html = (tmp_path / "run" / "report.html").read_text()
    assert f"lib: pydantic {version}" in html


def test_a_run_without_library_methods_has_no_libraries_entry(make_spec: Any, tmp_path: Path) -> None:
    results = run_experiment(make_spec(methods=[{"name": "frozen"}]), tmp_path / "run")
    assert "libraries" not in results["meta"]["extra"]


def test_list_methods_shows_each_library_and_version() -> None:
    done = CliRunner().invoke(app, ["list", "methods", "--json"])
    assert done.exit_code == 0, done.output
    rows = json.loads(done.output)
    assert all("library" in r for r in rows)
    assert next(r for r in rows if r["name"] == "gepa")["library"] is None
    for r in rows:  # every library method names an installed distribution and its version
        if r["library"] is not None:
            assert r["library"]["version"] == metadata.version(r["library"]["name"])
