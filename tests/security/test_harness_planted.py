"""A method that leaves its harness a FIFO, a sparse 300 MiB file, bytes that are not UTF-8, a lone-surrogate name,
a socket or a symlink, or proposes a candidate version with a `..` or absolute name, in process and in a process of
its own (`--certified`): its cell fails in one line naming the file, the cell, the step and the version, at once
(never a hang), nothing of that step is stored, and resuming the run reports the same line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import harness_planters  # noqa: F401 - registers the planting method
import pytest
from harness_planters import release, within

from evoarena.harness import HarnessPathError
from evoarena.protocol.run.runner import run_experiment
from evoarena.sandbox.isolation import detect
from evoarena.store import RunStore

BWRAP = "bwrap" in detect().available
CELL = "test-harness-planter__scripted__s0"
STEP = f"cell {CELL}, step practice/e0/0000/"
PLANTS = {
    "fifo": "'memory.fifo': a FIFO, not a regular file",
    "big": "'big.md': 300.0 MiB, over the cap of 4.0 MiB per file (protocol.harness.max_file_bytes)",
    "binary": "'blob.bin': not UTF-8 text (byte 0x89 at offset 0)",
    "surrogate": "'bad\\udcffname.md': the name is not valid UTF-8",
    "socket": "'s.sock': a socket, not a regular file",
    "symlink": "'link.md': a symlink, not a regular file",
    "candidate-dotdot": "new candidate version: '../escaped.md': '.' and '..' are refused",
    "candidate-absolute": "new candidate version: '/tmp/escaped.md': absolute paths are refused",
}
PLANTS_2K = "'notes.md': 2000 bytes, over the cap of 1000 bytes per file (protocol.harness.max_file_bytes)"


def _fifos(run_dir: Path) -> list[Path]:
    return list(run_dir.glob("cells/*/harness/memory.fifo"))


def _fails(spec: Any, run_dir: Path) -> str:
    """The one line the run fails with, within a minute (a FIFO the run waits on is then released)."""
    with pytest.raises(HarnessPathError) as err:
        within(60, lambda: run_experiment(spec, run_dir, probe=False), lambda: release(*_fifos(run_dir))())
    text = str(err.value)
    assert "\n" not in text and len(text) < 400
    return text


def _versions(run_dir: Path) -> list[str]:
    return [str(r["step"]) for r in RunStore(run_dir).query("SELECT step FROM harness_versions")]


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_planted_file_fails_its_cell_in_one_line_and_again_on_resume(tmp_path: Path, make_spec: Any,
                                                                       plant: str) -> None:
    spec = make_spec(methods=[{"name": "test-harness-planter", "params": {"plant": plant}}])
    first = _fails(spec, tmp_path / "run")
    assert first.startswith(STEP) and PLANTS[plant] in first
    if not plant.startswith("candidate"):
        assert ", version after " in first
    assert _versions(tmp_path / "run") == ["init"]  # nothing of the step that planted it
    assert _fails(spec, tmp_path / "run") == first  # a resume says the same, not a codec error
    assert not (tmp_path / "escaped.md").exists() and not Path("/tmp/escaped.md").exists()


@pytest.mark.skipif(not BWRAP, reason="bubblewrap does not work here")
@pytest.mark.parametrize(("plant", "rollout"), [("fifo", False), ("fifo", True), ("big", False), ("big", True),
                                                ("surrogate", False), ("candidate-dotdot", False)])
def test_a_method_in_its_own_process_fails_its_cell_the_same_way(tmp_path: Path, make_spec: Any, plant: str,
                                                                 rollout: bool) -> None:
    """The cell reads the tree where the step ends, and also mid-step when the method asks for a rollout on its
    live harness (the read the method's process waits on)."""
    spec = make_spec(methods=[{"name": "test-harness-planter", "params": {"plant": plant, "rollout": rollout}}],
                     protocol={"isolation": "process"})
    first = _fails(spec, tmp_path / "run")
    assert first.startswith(STEP) and PLANTS[plant] in first
    levels = RunStore(tmp_path / "run").query("SELECT payload FROM events WHERE kind LIKE '%isolation%'")
    assert levels and all("bwrap" in str(r["payload"]) for r in levels)  # the level the method ran at
    assert _versions(tmp_path / "run") == ["init"]
    assert _fails(spec, tmp_path / "run") == first


SPEC = """\
name: planted
benchmark: {name: arith, params: {seed: 0, n_train: 2, n_val: 1, n_test: 2}}
methods: [{name: "harness_planters:Planter", params: {plant: PLANT}}]
models: {scripted: {backend: scripted, model: arith-student}}
roles: {solver: scripted}
"""


@pytest.mark.skipif(not BWRAP, reason="bubblewrap does not work here: --certified needs it")
@pytest.mark.parametrize("plant", ["fifo", "big"])
def test_evoarena_run_certified_fails_in_one_line_instead_of_hanging(tmp_path: Path, plant: str) -> None:
    """`evoarena run --certified` on a method that plants a FIFO or a sparse 300 MiB file in its harness: exit 2
    with one line on stderr, well within the timeout that would otherwise end a hung run, and the same on resume."""
    spec = tmp_path / "planted.yaml"
    spec.write_text(SPEC.replace("PLANT", plant))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    command = [str(Path(sys.executable).parent / "evoarena"), "run", str(spec), "--model", "scripted",
               "--certified", "--no-probe", "--run-dir", str(tmp_path / "run")]
    lines = []
    for _ in range(2):  # the run, then its resume
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path)
        except subprocess.TimeoutExpired:
            release(*_fifos(tmp_path / "run"))()
            pytest.fail("evoarena run hung on the planted harness")
        assert done.returncode == 2, done.stderr[-2000:]
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
        lines.append(errors[0])
    assert lines[0] == lines[1]
    assert lines[0].startswith("error: cell ") and ", step practice/e0/" in lines[0]
    assert PLANTS[plant] in lines[0] and ", version after " in lines[0]


def test_a_cell_stopped_at_a_cap_resumes_with_a_raised_one(tmp_path: Path, make_spec: Any) -> None:
    """The caps are a guard, not part of what is run (nor of the spec hash): the same command with a raised cap
    resumes the run where it stopped."""
    method = {"name": "test-harness-planter", "params": {"plant": "2k"}}
    tight = make_spec(methods=[method], protocol={"harness": {"max_file_bytes": 1000}})
    assert PLANTS_2K in _fails(tight, tmp_path / "run")
    results = run_experiment(make_spec(methods=[method], protocol={"harness": {"max_file_bytes": 4096}}),
                             tmp_path / "run", probe=False)
    assert [c["condition"] for c in results["conditions"]] == ["test-harness-planter"]
    assert "init" in _versions(tmp_path / "run") and len(_versions(tmp_path / "run")) == 2
