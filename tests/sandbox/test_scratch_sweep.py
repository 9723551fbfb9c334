"""Scratch dirs a killed run left behind are swept on the next start: only dead owners', only real directories."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evoarena.sandbox.scratch import SCRATCH_PREFIX, sweep_stale


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.skipif(os.name == "nt", reason="POSIX pids")
def test_sweep_removes_dead_owners_dirs_only(tmp_path: Path) -> None:
    dead = _dead_pid()
    stale = tmp_path / f"{SCRATCH_PREFIX}{dead}-abc"
    (stale / "sub").mkdir(parents=True)
    (stale / "sub" / "main.py").write_text("x")
    (stale / "sub").chmod(0o500)  # what sandboxed code may leave
    mine = tmp_path / f"{SCRATCH_PREFIX}{os.getpid()}-def"
    mine.mkdir()
    legacy = tmp_path / f"{SCRATCH_PREFIX}q1w2e3"  # no pid in the name: owner unknown, kept
    legacy.mkdir()
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep")
    (tmp_path / f"{SCRATCH_PREFIX}{dead}-lnk").symlink_to(victim)  # a planted link is never followed
    removed = sweep_stale(str(tmp_path))
    assert removed == (str(stale),)
    assert not stale.exists() and mine.is_dir() and legacy.is_dir()
    assert (victim / "keep.txt").read_text() == "keep"
