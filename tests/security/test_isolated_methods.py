"""Hostile methods against both isolation modes. In-process (trusted code) the accidental handles are gone but gc and
frames still reach the cell — asserted, so the day that changes the docs change too. In a process of its own, under
bubblewrap, every route fails and a forging method's test score equals frozen's."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import hostile_methods  # noqa: F401 - registers the hostile methods
import pytest

from evoarena.harness import load_tree
from evoarena.protocol.run.runner import run_experiment
from evoarena.sandbox.isolation import detect
from evoarena.sandbox.spawn import CONFINEMENTS, confinement_problem
from evoarena.store import RunStore

BWRAP = "bwrap" in detect().available
STRONGEST = next(c for c in CONFINEMENTS if confinement_problem(c) is None)
SECRET = "sk-test-isolation-9d1e-do-not-leak"


def _found(run_dir: Path, condition: str = "test-hostile-snoop") -> dict[str, Any]:
    store = RunStore(run_dir)
    cell = next(c for c in store.cells() if c["condition"] == condition)
    return dict(json.loads(load_tree(store, cell["current_version"])["found.json"]))


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(hostile_methods.SECRET_ENV, SECRET)
    return SECRET


def test_in_process_the_handles_are_gone_and_the_remaining_routes_are_known(tmp_path: Path, make_spec: Any,
                                                                             secret: str) -> None:
    run_experiment(make_spec(methods=[{"name": "test-hostile-snoop"}]), tmp_path / "run", probe=False)
    found = _found(tmp_path / "run")
    assert found["private"] == [] and found["model_store"] is False  # no handle by accident
    # what trusted, in-process code can still reach (docs/security.md): the process's objects and frames
    assert found["gc_test_tasks"] > 0 and found["gc_stores"] > 0 and found["gc_benchmarks"] > 0
    assert found["frame_stores"] > 0 and found["db_readable"] and found["secret_in_env"]
    assert found["cache_writable"]  # the shared response cache, written straight to its file
    assert found["pid"] == os.getpid()


@pytest.mark.skipif(not BWRAP, reason="bubblewrap does not work here: a method's process can read this user's files")
def test_in_its_own_process_every_route_fails(tmp_path: Path, make_spec: Any, secret: str) -> None:
    spec = make_spec(methods=[{"name": "test-hostile-snoop"}], protocol={"isolation": "process"})
    run_experiment(spec, tmp_path / "run", probe=False)
    found = _found(tmp_path / "run")
    assert found["pid"] != os.getpid()
    assert found["private"] == [] and found["model_store"] is False
    assert found["gc_tasks"] == 0 and found["gc_test_tasks"] == 0  # views only: no reference answer of any split
    assert found["gc_benchmarks"] == 0 and found["gc_stores"] == 0 and found["frame_stores"] == 0
    assert found["db_readable"] is False  # the run directory is masked
    assert found["secret_in_env"] is False  # a minimal environment: no API keys


@pytest.mark.skipif(not BWRAP, reason="bubblewrap does not work here: a method's process can read this user's files")
def test_a_forging_thread_in_its_own_process_changes_no_score(tmp_path: Path, make_spec: Any) -> None:
    spec = make_spec(methods=[{"name": "frozen"}, {"name": "test-hostile-forger"}],
                     protocol={"isolation": "process"})
    results = run_experiment(spec, tmp_path / "run", probe=False)
    by = {c["condition"]: c for c in results["conditions"]}
    assert by["frozen"]["test"]["mean"] < 1.0  # there was something to forge
    assert by["test-hostile-forger"]["test"]["mean"] == by["frozen"]["test"]["mean"]
    rows = RunStore(tmp_path / "run").query("SELECT cell, task_id, score FROM attempts WHERE phase = 'test'")
    scores: dict[str, dict[str, float]] = {}
    for r in rows:
        scores.setdefault("forger" if "forger" in r["cell"] else "frozen", {})[r["task_id"]] = r["score"]
    assert scores["forger"] == scores["frozen"]  # task by task


@pytest.mark.skipif(os.name == "nt", reason="RLIMIT_CPU is POSIX")
@pytest.mark.parametrize("confinement", [c for c in CONFINEMENTS if confinement_problem(c) is None])
def test_a_spinning_method_is_stopped_by_its_cpu_limit(tmp_path: Path, make_spec: Any, confinement: str) -> None:
    """A method's own code that never returns is killed at `protocol.method_cpu_s`, at every confinement: the cell
    fails saying so, long before any wall clock would have ended it, and nothing of the method's process is left."""
    import time

    import psutil

    from evoarena.protocol.boundary.isolated import MethodProcessError

    spec = make_spec(methods=[{"name": "test-hostile-spinner"}],
                     protocol={"isolation": "process", "method_cpu_s": 2, "method_confinement": confinement})
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    start = time.monotonic()
    with pytest.raises(MethodProcessError, match=r"passed its CPU limit \(protocol.method_cpu_s: 2 s\)"):
        run_experiment(spec, tmp_path / "run", probe=False)
    assert time.monotonic() - start < 60
    assert {p.pid for p in psutil.Process().children(recursive=True)} - before == set()
    assert spec.spec_hash() != make_spec(methods=[{"name": "test-hostile-spinner"}],
                                         protocol={"isolation": "process"}).spec_hash()


MAZE = {"name": "maze", "params": {"seed": 0, "n_train": 1, "n_val": 0, "n_test": 1, "size": 5, "max_steps": 3}}
MAZE_MODELS = {"models": {"m": {"backend": "scripted", "model": "maze-explorer"}}, "roles": {"solver": "m"}}


def _agent_notes(run_dir: Path) -> list[dict[str, Any]]:
    rows = RunStore(run_dir).query("SELECT answer FROM attempts WHERE answer IS NOT NULL ORDER BY id")
    return [s["agent"] for r in rows for s in json.loads(r["answer"])["trace"] if s.get("agent")]


@pytest.mark.skipif(not BWRAP, reason="bubblewrap does not work here: a method's process can read this user's files")
def test_an_episode_agent_in_its_own_process_reaches_nothing_of_the_cell(tmp_path: Path, make_spec: Any) -> None:
    """The agent acts in the method's process; through its context it gets the episode's prompt, parse and models,
    never a label, a grade or an attempt (not even in a practice episode, where the step's channel is one frame
    up), and gc there shows it no task, benchmark or store."""
    spec = make_spec(name="hostile-agent", benchmark=MAZE, methods=[{"name": "test-hostile-agent"}],
                     protocol={"isolation": "process", "epochs": 1}, **MAZE_MODELS)
    run_experiment(spec, tmp_path / "run", probe=False)
    notes = _agent_notes(tmp_path / "run")
    assert len(notes) == 2  # the practice episode and the test episode
    for note in notes:
        assert note["pid"] != os.getpid()
        assert note["refused"] == ["label: ValueError", "grade: ValueError", "attempt: ValueError"]
        assert note["gc_tasks"] == 0 and note["gc_benchmarks"] == 0 and note["gc_stores"] == 0


@pytest.mark.parametrize("isolation", ["in-process", "process"])
def test_an_episode_agents_edit_outside_the_harness_ends_its_episode(tmp_path: Path, make_spec: Any,
                                                                    isolation: str) -> None:
    """Refused by the cell, so at any confinement (the strongest this machine has)."""
    confined = {"method_confinement": STRONGEST} if isolation == "process" else {}
    spec = make_spec(name="hostile-agent", benchmark=MAZE, methods=[{"name": "test-hostile-agent",
                                                                       "params": {"escape": True}}],
                     protocol={"isolation": isolation, "epochs": 1, **confined}, **MAZE_MODELS)
    run_experiment(spec, tmp_path / "run", probe=False)
    rows = RunStore(tmp_path / "run").query("SELECT phase, answer, parse_error, score FROM attempts ORDER BY id")
    assert [r["phase"] for r in rows] == ["practice", "test"]
    for r in rows:
        assert r["answer"] is None and r["score"] == 0.0
        assert r["parse_error"].startswith("harness edit refused")
    assert not list(tmp_path.rglob("escaped.txt"))
