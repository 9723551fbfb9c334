"""The terminal at 80 columns: each table command's lines fit with its key columns whole (`--wide` shows the rest),
`--help` lists one sentence a command; a run's live rows appear once per cell (no phantom rows, through a real pty);
piped output gets plain progress lines; a live run's calls in flight are pending, not errors."""

from __future__ import annotations

import io
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console
from rich.progress import Progress
from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.cli.common import out
from evoarena.cli.live import LiveRows, short
from evoarena.protocol.progress import CellProgress
from evoarena.store import RunStore
from evoarena.store.calls import INTERRUPTED, pending_calls

runner = CliRunner()
RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "arith-basics.yaml"
CELLS = ("frozen__scripted__s0", "reflexion__scripted__s0", "bootstrap_fewshot__scripted__s0")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture(autouse=True)
def eighty() -> Iterator[None]:
    width = out.width
    out.width = 80
    yield
    out.width = width


@pytest.fixture
def run_dir(arith_basics_run: Path) -> Path:
    return arith_basics_run


def _fits(text: str) -> list[str]:
    lines = text.splitlines()
    assert lines and max(len(line) for line in lines) <= 80, max(lines, key=len)
    return lines


def _header(lines: list[str]) -> str:
    """A table's header row (its last line, where a header folds onto several)."""
    return [line for line in lines if line.startswith("┃")][-1]


@pytest.mark.parametrize(("args", "keys"), [
    (["show", "{run}"], ["cell", "test mean", "n", "errors", "val mean"]),
    (["calls", "{run}", "--limit", "5"], ["id", "cell", "role", "in", "out", "error"]),
    (["list", "methods"], ["name", "roles", "description"]),
    (["probe-roles", str(RECIPE), "--model", "scripted", "--run-dir", "{run}"], ["role", "method", "model", "usable"]),
])
def test_tables_fit_80_columns_with_their_key_columns(run_dir: Path, args: list[str], keys: list[str]) -> None:
    result = runner.invoke(app, [a.replace("{run}", str(run_dir)) for a in args])
    assert result.exit_code == 0, result.output
    lines = _fits(result.stdout)
    header = {c.strip() for line in lines if line.startswith("┃") for c in line.split("┃")}
    assert all(k in header for k in keys), header
    if args[0] in ("show", "calls"):
        assert any("bootstrap_fewshot__scripted__s0" in line for line in lines)  # a key column is never cut
    if args[:2] == ["list", "methods"]:
        assert any(line.startswith("│ reflexion ") for line in lines)
    assert any("--wide shows all" in line for line in lines) or args[0] == "probe-roles"


def test_wide_shows_the_columns_left_out(run_dir: Path) -> None:
    narrow = runner.invoke(app, ["show", str(run_dir)]).stdout
    note = next(line for line in narrow.splitlines() if "hidden to fit 80 columns: --wide shows all)" in line)
    assert "version" in note and "test pass" in note
    assert "┃ test pass" not in narrow and "┃ version" not in narrow
    wide = runner.invoke(app, ["show", str(run_dir), "--wide"]).stdout
    assert "┃ test pass" in wide and "┃ version" in wide and "hidden" not in wide


def test_plan_fits_80_columns(tmp_path: Path) -> None:
    result = runner.invoke(app, ["plan", str(RECIPE), "--model", "scripted", "--baseline", "0.5"])
    assert result.exit_code == 0, result.output
    lines = _fits(result.stdout)
    header = next(line for line in lines if line.startswith("condition"))
    assert all(k in header for k in ("MDE", "≤min", "calls", "usd", "wall"))
    assert any(line.startswith("bootstrap_fewshot │ frozen") for line in lines)


def test_help_at_80_columns_lists_one_sentence_a_command() -> None:
    result = CliRunner(env={"COLUMNS": "80"}).invoke(app, ["--help"])
    lines = _fits(result.stdout)
    run = next(line for line in lines if line.startswith("│ run "))
    assert "Run (or resume) an experiment." in run
    assert not any("Re-running the same command" in line for line in lines)  # that is `run --help`'s


def test_live_rows_add_each_cell_once_in_run_order() -> None:
    bar = Progress(console=Console(file=io.StringIO(), width=80))
    rows = LiveRows(bar, CELLS, wide=False)
    for cell in (CELLS[1], CELLS[0], CELLS[1], CELLS[2], CELLS[0]):
        rows(CellProgress(cell, "practice", 1, 10, calls=3, pending=1))
    assert [t.description for t in bar.tasks] == [short(c) for c in CELLS]  # cut in the middle on a narrow terminal
    assert short(CELLS[2]) == "bootstrap_f…scripted__s0"
    assert "3 calls +1 pending" in bar.tasks[0].fields["info"]


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pty")
def test_no_phantom_rows_in_a_terminal(tmp_path: Path) -> None:
    """Scripted arith-basics in a real 80-column pty: the last frame of the live display has one row per cell."""
    import fcntl
    import struct
    import termios

    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 80, 0, 0))
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "80", "LINES": "40"}
    proc = subprocess.Popen([sys.executable, "-m", "evoarena.cli", "run", str(RECIPE), "--model", "scripted",
                             "--run-dir", str(tmp_path / "run")], stdout=follower, stderr=follower, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(timeout=120) == 0
    text = b"".join(chunks).decode("utf-8", "replace")
    live = text[text.index("\x1b[?25l"): text.index("\x1b[?25h")]  # the live display hides the cursor meanwhile
    frames = [[line.split()[0] for line in ANSI.sub("", f).replace("\r", "").splitlines() if line.strip()]
              for f in re.split(r"\r\x1b\[2K(?:\x1b\[1A\x1b\[2K)*", live)]  # each redraw erases the last frame
    assert all(len(f) == len(set(f)) for f in frames), [f for f in frames if len(f) != len(set(f))]
    assert frames[-1] == [short(c) for c in CELLS]
    last = ANSI.sub("", re.split(r"\x1b\[2K", live)[-1]).replace("\r", "").splitlines()
    assert all("done" in r and len(r) <= 80 for r in last if r.strip())


def test_piped_output_gets_plain_progress_lines(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", str(RECIPE), "--model", "scripted", "--run-dir", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.split("  ")[0] in CELLS]
    assert len(lines) == len(set(lines))  # never the same line twice
    for cell in CELLS:
        mine = [line.split("  ") for line in lines if line.startswith(cell + "  ")]
        assert [f[1] for f in mine if f[1] != mine[-1][1]][0] == "practice" and mine[-1][1] == "done"
        assert {"practice", "select", "test", "done"} <= {f[1] for f in mine}
        assert mine[-1][2] == "68/68" and re.fullmatch(r"\d+ calls", mine[-1][4])
        assert all(f[-1].startswith("eta ") for f in mine if f[1] != "done")
    assert result.stdout.index(CELLS[0]) < result.stdout.index("test accuracy")


def test_calls_in_flight_are_pending_not_errors(run_dir: Path, tmp_path: Path) -> None:
    live = tmp_path / "live"
    shutil.copytree(run_dir, live)
    with sqlite3.connect(live / "run.sqlite") as db:  # a run still running, two solver calls sent, not answered
        db.execute("UPDATE runs SET status='running'")
        db.execute("UPDATE calls SET error=? WHERE id IN (SELECT id FROM calls WHERE role='solver' "
                   "ORDER BY id DESC LIMIT 2)", [INTERRUPTED])
    assert pending_calls(RunStore(live), CELLS[2]) == 2
    show = runner.invoke(app, ["show", str(live)]).stdout
    header = [c.strip() for c in _header([line for line in show.splitlines() if "pending" in line]).split("┃")]
    solver = [c.strip() for c in next(line for line in show.splitlines() if line.startswith("│ solver")).split("│")]
    assert solver[header.index("pending")] == "2" and solver[header.index("errors")] == "0"
    calls = runner.invoke(app, ["calls", str(live), "--limit", "3"]).stdout
    assert calls.count("pending") == 2 and "interrupted" not in calls


def test_the_accuracy_table_lists_conditions_in_spec_order(run_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    result = runner.invoke(app, ["report", str(copy)])
    assert result.exit_code == 0, result.output
    rows = [line.split("│")[1].strip() for line in result.output.splitlines() if line.startswith("│")]
    assert rows[:3] == ["frozen", "reflexion", "bootstrap_fewshot"]  # the spec's order, baseline first
