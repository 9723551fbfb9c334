"""`protocol.isolation: process` (`evoarena run --certified`) promises bubblewrap: without it the run refuses to
start, in one line, before anything is written. A spec may ask for a weaker confinement, and then results.json says
which promises do not hold; under bubblewrap a method that attacks the run's records changes nothing in results.json.
The hostile method is `hostile_methods.HostileBoundary`."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hostile_methods
import pytest

from evoarena.harness import load_tree
from evoarena.protocol.confinement import promises
from evoarena.protocol.run.runner import run_experiment
from evoarena.sandbox import isolation, spawn
from evoarena.spec import SpecError
from evoarena.store import RunStore

BWRAP = spawn.confinement_problem("bwrap") is None
NAMESPACES = spawn.confinement_problem("namespaces") is None
SECRET = "sk-test-certified-4b7e-do-not-leak"
HERE = Path(__file__).resolve().parent
RECIPE = HERE.parents[1] / "recipes" / "arith-basics.yaml"


def _path_without_bwrap(tmp: Path) -> str:
    """A PATH with every program of /usr/bin and /bin but bubblewrap (each a symlink in `tmp`)."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for d in ("/usr/local/bin", "/usr/bin", "/bin"):
        for name in os.listdir(d) if os.path.isdir(d) else ():
            if name != "bwrap" and not (bin_dir / name).exists():
                (bin_dir / name).symlink_to(Path(d) / name)
    return f"{bin_dir}:{Path(sys.executable).parent}"


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """This process without bubblewrap on its PATH (detection probed again, and again after the test)."""
    path = _path_without_bwrap(tmp_path)
    monkeypatch.setenv("PATH", path)
    isolation.detect.cache_clear()
    yield path
    monkeypatch.undo()
    isolation.detect.cache_clear()


def test_certified_without_bwrap_exits_in_one_line_and_writes_no_run_dir(tmp_path: Path) -> None:
    path = _path_without_bwrap(tmp_path)
    target = tmp_path / "run"
    env = {**os.environ, "PATH": path, "HOME": str(tmp_path), "EVOARENA_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([str(Path(sys.executable).parent / "evoarena"), "run", str(RECIPE), "--model", "scripted",
                           "--certified", "--no-probe", "--run-dir", str(target)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, check=False)
    assert done.returncode != 0
    said = (done.stdout + done.stderr).strip().splitlines()
    assert len(said) == 1, said
    assert "bubblewrap (bwrap) is not installed" in said[0] and "make system-deps" in said[0]
    assert "apt-get install bubblewrap" in said[0] and "protocol.method_confinement" in said[0]
    assert not target.exists() and not (tmp_path / "runs").exists()


def test_run_experiment_evolve_and_a_ray_worker_refuse_without_bwrap(tmp_path: Path, make_spec: Any,
                                                                      no_bwrap: str) -> None:
    from evoarena.one_call import evolve
    from evoarena.protocol.run.ray_executor import work_cell
    from evoarena.protocol.run.runner import plan_cells

    spec = make_spec(methods=[{"name": "frozen"}], protocol={"isolation": "process"})
    with pytest.raises(SpecError, match=r"bubblewrap \(bwrap\) is not installed"):
        run_experiment(spec, tmp_path / "run", probe=False)
    assert not (tmp_path / "run").exists()
    with pytest.raises(SpecError, match=r"bubblewrap \(bwrap\) is not installed"):  # a node without bubblewrap
        work_cell(spec.model_dump_json(), plan_cells(spec)[0], None, [], str(tmp_path / "cache"), 1, "", None)
    tasks = [{"input": f"{i} + 1", "answer": str(i + 1)} for i in range(12)]
    with pytest.raises(SpecError, match="confines each method with bubblewrap, and bubblewrap"):
        evolve(tasks, method="frozen", model="scripted:arith-student", protocol={"isolation": "process"},
               root=tmp_path / "runs")
    assert [p.name for p in (tmp_path / "runs").iterdir()] == ["tasks"]  # evolve's task file, no run directory


def test_a_weaker_confinement_applies_only_to_process_isolation(make_spec: Any) -> None:
    from evoarena.protocol.validate import validate_run

    with pytest.raises(SpecError, match=r"^protocol.method_confinement: applies only with protocol.isolation: process"):
        validate_run(make_spec(protocol={"method_confinement": "none"}))
    plain = make_spec(protocol={"isolation": "process"})
    assert plain.spec_hash() == make_spec(protocol={"isolation": "process", "method_confinement": "bwrap"}).spec_hash()
    assert plain.spec_hash() != make_spec(protocol={"isolation": "process", "method_confinement": "none"}).spec_hash()
    in_process = make_spec()  # as a Ray worker or a benchmark script gets it: every field set, at its default
    validate_run(type(in_process).model_validate(in_process.model_dump()))


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on 127.0.0.1 (what a method in its own network namespace must not reach)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield int(s.getsockname()[1])


def _hostile(port: int, cache_dir: Path, forge: bool = False) -> dict[str, Any]:
    return {"name": "test-hostile-boundary",
            "params": {"run_pid": os.getpid(), "port": port, "cache_dir": str(cache_dir), "forge": forge}}


def _found(run_dir: Path) -> dict[str, Any]:
    store = RunStore(run_dir)
    cell = next(c for c in store.cells() if c["condition"] == "test-hostile-boundary")
    return dict(json.loads(load_tree(store, cell["current_version"])["found.json"]))


def _nothing_inherited(found: dict[str, Any], run_dir: Path) -> None:
    """No key in the child's environment or command line, and no descriptor of the run's files or sockets."""
    assert found["secret_in_env"] is False and found["secret_in_argv"] is False
    assert not [f for f in found["open_files"] if "sqlite" in f or str(run_dir) in f or f.startswith("socket:")]


def _runner_refused(found: dict[str, Any]) -> None:
    for kind, said in found["refused"].items():
        assert said.startswith("ValueError: ctx.log: event kind") and "written by the runner only" in said, kind


@pytest.mark.skipif(not NAMESPACES, reason="unshare cannot make user, pid, mount and network namespaces here")
def test_namespaces_hide_the_run_process_and_the_network_and_say_what_does_not_hold(
        tmp_path: Path, make_spec: Any, listener: int, _own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(hostile_methods.SECRET_ENV, SECRET)
    spec = make_spec(methods=[_hostile(listener, _own_cache)],
                     protocol={"isolation": "process", "method_confinement": "namespaces"})
    results = run_experiment(spec, tmp_path / "run", probe=False)
    found = _found(tmp_path / "run")
    assert found["pid"] != os.getpid()
    _nothing_inherited(found, tmp_path / "run")
    assert found["environ_readable"] is False and found["secret_seen"] is False and found["mem_readable"] is False
    assert found["signal"] is False and found["network"] is False
    assert found["db_writable"] and found["cache_writable"]  # documented: this user's files stay in reach
    _runner_refused(found)
    isolated = results["meta"]["extra"]["method_isolation"]
    assert isolated["asked"] == "namespaces" and isolated["levels"] == ["namespaces"]
    assert isolated["lacks"] == promises("namespaces")["lacks"]
    assert any("write the run store or the response cache" in p for p in isolated["lacks"])
    assert any("see or signal the run process" in p for p in isolated["holds"])
    assert "not promised at this level" in (tmp_path / "run" / "report.html").read_text()


def _test_scores(run_dir: Path) -> dict[str, dict[str, float]]:
    rows = RunStore(run_dir).query("SELECT cell, task_id, score FROM attempts WHERE phase = 'test'")
    out: dict[str, dict[str, float]] = {}
    for r in rows:
        out.setdefault(r["cell"].split("__")[0], {})[r["task_id"]] = r["score"]
    return out


@pytest.mark.skipif(not BWRAP, reason="bubblewrap does not work here")
def test_under_bwrap_a_hostile_method_changes_nothing_in_results(tmp_path: Path, make_spec: Any, listener: int,
                                                                _own_cache: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Forged scores, a poisoned cache, /proc of the run, a signal, a socket and forged runner events: the hostile
    cell (first, so that its threads run while the frozen cell calls) scores as frozen does, frozen scores as in an
    honest run, and results.json reports the isolation the honest run reports."""
    monkeypatch.setenv(hostile_methods.SECRET_ENV, SECRET)
    protocol = {"isolation": "process"}
    honest = run_experiment(make_spec(methods=[{"name": "frozen"}], protocol=protocol), tmp_path / "honest",
                            probe=False)
    hostile = run_experiment(make_spec(methods=[_hostile(listener, _own_cache, forge=True), {"name": "frozen"}],
                                       protocol=protocol), tmp_path / "run", probe=False)
    found = _found(tmp_path / "run")
    assert not any(found[k] for k in ("environ_readable", "secret_seen", "mem_readable", "signal", "network",
                                      "db_writable", "cache_writable"))
    _nothing_inherited(found, tmp_path / "run")
    _runner_refused(found)
    by = {c["condition"]: c["test"] for c in hostile["conditions"]}
    assert by["frozen"]["mean"] < 1.0  # there was something to forge
    assert by["test-hostile-boundary"] == by["frozen"] == honest["conditions"][0]["test"]
    scores = _test_scores(tmp_path / "run")
    assert scores["test-hostile-boundary"] == scores["frozen"] == _test_scores(tmp_path / "honest")["frozen"]
    assert hostile["meta"]["extra"]["method_isolation"] == honest["meta"]["extra"]["method_isolation"]
    assert hostile["meta"]["extra"]["method_isolation"]["lacks"] == []
    with sqlite3.connect(_own_cache / "responses.sqlite") as con:
        assert con.execute("SELECT COUNT(*) FROM responses WHERE completion LIKE '%POISONED%'").fetchone()[0] == 0


@pytest.mark.parametrize("mode", ["in-process", *(c for c in spawn.CONFINEMENTS
                                                  if spawn.confinement_problem(c) is None)])
def test_ctx_log_of_a_runner_kind_is_refused(tmp_path: Path, make_spec: Any, listener: int, _own_cache: Path,
                                             mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """In both isolation modes, at every confinement; and a method's own process inherits no key and no descriptor
    of the run's files."""
    monkeypatch.setenv(hostile_methods.SECRET_ENV, SECRET)
    protocol = {"isolation": "in-process"} if mode == "in-process" else {"isolation": "process",
                                                                        "method_confinement": mode}
    results = run_experiment(make_spec(methods=[_hostile(listener, _own_cache)], protocol=protocol), tmp_path / "run",
                             probe=False)
    found = _found(tmp_path / "run")
    _runner_refused(found)
    if mode != "in-process":
        _nothing_inherited(found, tmp_path / "run")
        assert results["meta"]["extra"]["method_isolation"]["levels"] == [mode]
    by_method = RunStore(tmp_path / "run").query("SELECT kind FROM events WHERE source = 'method'")
    assert not {r["kind"] for r in by_method} & {"method_isolation", "run_finished", "probes"}


def test_a_response_cache_inside_the_run_dir_is_refused(tmp_path: Path, make_spec: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVOARENA_CACHE_DIR", str(tmp_path / "run" / "cells" / "x" / "harness" / ".cache"))
    spec = make_spec(methods=[{"name": "frozen"}], protocol={"isolation": "process", "method_confinement": "none"})
    with pytest.raises(SpecError, match=r"the response cache \(.*\) lies inside the run directory"):
        run_experiment(spec, tmp_path / "run", probe=False)
    assert not (tmp_path / "run").exists()


def test_the_banner_says_which_promises_do_not_hold(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evoarena.cli import app

    result = CliRunner().invoke(app, ["run", str(RECIPE), "--model", "scripted", "--certified", "--no-probe",
                                      "--set", "protocol.method_confinement=none", "--set", "seeds=[0]",
                                      "--run-dir", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # rich wraps at the test terminal's width
    assert "methods: own process, none method confinement none (protocol.method_confinement): a method can see " \
           "or signal the run process" in said
    meta = json.loads((tmp_path / "run" / "results.json").read_text())["meta"]["extra"]["method_isolation"]
    assert meta["levels"] == ["none"] and meta["lacks"] == promises("none")["lacks"]
