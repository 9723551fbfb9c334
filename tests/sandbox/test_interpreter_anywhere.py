"""A Python whose venv lives under /tmp (a clone under /tmp, as on a fresh machine) runs sandboxed programs at every
level, cold and warm, and as a spawned child: its executable, its site-packages and what a .pth file adds to its
sys.path are bound back read-only over the sandbox's private /tmp, which still shows nothing else of the host's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import evoarena.sandbox.spawn as spawn_mod
from evoarena.sandbox import SandboxLimits, close_workers, isolation
from evoarena.sandbox.interpreter import resolve_python
from evoarena.sandbox.runner import child_env, run_with
from evoarena.sandbox.worker import warm_supported

MODES = [*isolation.detect().available, *(["bwrap:warm"] if warm_supported() else [])]
HIDES_FILES = ("bwrap", "bwrap:warm")

PROGRAM = """
import json, os, subprocess, sys
import in_site_packages, in_pth_dir
child = subprocess.run([sys.executable, "-c", "import in_site_packages; print(in_site_packages.X)"],
                       capture_output=True, text=True)
try:
    open(os.path.join(os.path.dirname(in_site_packages.__file__), "planted.py"), "w").close()
    wrote_site_packages = True
except OSError:
    wrote_site_packages = False
open(os.environ["HOST_MARKER"] + "-written", "w").close()  # a private /tmp is writable
print(json.dumps({"executable": sys.executable, "site": in_site_packages.X, "pth": in_pth_dir.Y,
                  "child": child.stdout.strip(), "wrote_site_packages": wrote_site_packages,
                  "host_tmp": os.path.exists(os.environ["HOST_MARKER"])}))
"""


@dataclass(frozen=True)
class TmpVenv:
    python: str  # <top>/venv/bin/python
    top: str  # a directory directly under /tmp holding the venv, the .pth's directory and a marker file
    site: str  # the venv's site-packages
    marker: str  # a host file next to the venv, which a sandbox with a private /tmp must not show


@pytest.fixture(scope="module")
def tmp_venv() -> Iterator[TmpVenv]:
    """`python -m venv --without-pip` under /tmp (whatever TMPDIR says), a module in its site-packages, and a .pth
    that puts another directory under /tmp on its sys.path (what an editable install does)."""
    top = tempfile.mkdtemp(prefix="evoarena-venv-", dir="/tmp")
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", f"{top}/venv"], check=True, timeout=120)
        python = f"{top}/venv/bin/python"
        site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        Path(site, "in_site_packages.py").write_text("X = 'site-packages'\n", "utf-8")
        Path(site, "prog_main.py").write_text("import sys, in_pth_dir\nprint(sys.executable, in_pth_dir.Y)\n", "utf-8")
        Path(top, "src").mkdir()
        Path(top, "src", "in_pth_dir.py").write_text("Y = 'pth'\n", "utf-8")
        Path(site, "extra.pth").write_text(f"{top}/src\n/tmp\n{os.path.expanduser('~')}\n", "utf-8")
        Path(top, "marker").write_text("host", "utf-8")
        yield TmpVenv(python, top, site, f"{top}/marker")
    finally:
        close_workers()  # the warm worker on this interpreter (the others restart when next used)
        shutil.rmtree(top, ignore_errors=True)


def test_the_roots_are_the_venv_and_its_path_entries_not_tmp_or_home(tmp_venv: TmpVenv) -> None:
    roots = resolve_python(tmp_venv.python).roots
    assert f"{tmp_venv.top}/venv" in roots and f"{tmp_venv.top}/src" in roots
    assert not {"/tmp", tmp_venv.top, os.path.expanduser("~")} & set(roots)


@pytest.mark.parametrize("mode", MODES)
def test_a_venv_under_tmp_runs_sandboxed_programs(mode: str, tmp_venv: TmpVenv, monkeypatch: pytest.MonkeyPatch,
                                                  ) -> None:
    level, _, warm = mode.partition(":")
    monkeypatch.setattr("evoarena.sandbox.runner.child_env", _with_marker(tmp_venv.marker))
    res = run_with(level, PROGRAM, python=tmp_venv.python, warm=bool(warm) if level == "bwrap" else None,
                   limits=SandboxLimits(wall_s=30))
    assert res.ok(), res.stderr
    assert res.warm == bool(warm)
    got = json.loads(res.stdout)
    assert (got["executable"], got["site"], got["pth"], got["child"]) == (tmp_venv.python, "site-packages", "pth",
                                                                         "site-packages")
    planted, written = Path(tmp_venv.site, "planted.py"), Path(f"{tmp_venv.marker}-written")
    if mode in HIDES_FILES:  # read-only, and the rest of the host's /tmp stays out of sight
        assert not got["wrote_site_packages"] and not got["host_tmp"]
        assert not planted.exists() and not written.exists()
    else:  # no filesystem isolation below bubblewrap
        assert got["wrote_site_packages"] and got["host_tmp"]
        planted.unlink()
        written.unlink()


def _with_marker(marker: str) -> Callable[[str, str, str], dict[str, str]]:
    """The sandbox's environment plus where the host's marker file is (a path the program checks it cannot see)."""

    def env(exe: str, scratch: str, level: str) -> dict[str, str]:
        return {**child_env(exe, scratch, level), "HOST_MARKER": marker}

    return env


def test_a_spawned_child_runs_on_a_venv_under_tmp(tmp_venv: TmpVenv, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spawn_mod, "resolve_python", lambda _: resolve_python(tmp_venv.python))
    child = spawn_mod.spawn_python("prog_main", writable=str(tmp_path))
    try:
        assert child.proc.stdout is not None
        out = child.proc.stdout.read().decode()
        assert child.proc.wait(timeout=30) == 0
    finally:
        child.close()
    assert out == f"{tmp_venv.python} pth\n"
    assert child.level == ("bwrap" if "bwrap" in isolation.detect().available else "process")
