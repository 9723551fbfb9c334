"""Attacks on the harness write API: a planted symlink at a temp-file name, over-long and
impossible names, an interrupted write. Each either writes inside the root only or fails in one line, leaving
nothing outside and no half-written file in the tree."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from evoarena.harness import HarnessPathError, HarnessWorkspace, workspace


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "outside.txt"
    victim.write_text("original\n")
    return victim


def test_a_symlink_planted_at_the_old_temp_name_is_never_followed(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    ws = HarnessWorkspace(tmp_path / "h")
    os.symlink(victim, ws.root / "x.md.evoarena-tmp")  # the fixed temp name earlier versions wrote through
    ws.write("x.md", "inside\n")
    assert victim.read_text() == "original\n"
    target = ws.root / "x.md"
    assert not target.is_symlink() and target.read_text() == "inside\n"


def test_symlinks_planted_at_many_temp_names_are_never_followed(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    ws = HarnessWorkspace(tmp_path / "h")
    for i in range(50):  # guesses at any temp-name scheme: whatever the name, an existing path is not reused
        os.symlink(victim, ws.root / f".x.md.{i:08x}.evoarena-tmp")
    for n in range(20):
        ws.write("x.md", f"inside {n}\n")
    assert victim.read_text() == "original\n" and (ws.root / "x.md").read_text() == "inside 19\n"


@pytest.mark.parametrize("rel", ["a" * 256 + ".md", "skills/" + "é" * 120 + "/SKILL.md", "/".join(["d"] * 40)])
def test_over_long_or_over_deep_names_fail_in_one_line(tmp_path: Path, rel: str) -> None:
    ws = HarnessWorkspace(tmp_path / "h")
    with pytest.raises(HarnessPathError) as err:
        ws.write(rel, "x")
    assert "\n" not in str(err.value) and len(str(err.value)) < 200
    assert list(ws.root.iterdir()) == []


def test_a_file_in_the_way_of_a_directory_fails_in_one_line(tmp_path: Path) -> None:
    ws = HarnessWorkspace(tmp_path / "h")
    ws.write("skills", "a file, not a folder\n")
    with pytest.raises(HarnessPathError, match=r"^'skills/a/SKILL.md': cannot be written \(") as err:
        ws.write("skills/a/SKILL.md", "x")
    assert "\n" not in str(err.value)
    assert ws.tree() == {"skills": "a file, not a folder\n"}


def test_an_interrupted_write_keeps_the_old_text_and_leaves_no_temp_file(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    ws = HarnessWorkspace(tmp_path / "h")
    ws.write("x.md", "old\n")

    def full(src: str, dst: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(workspace.os, "replace", full)  # the disk fills once the temp file is written
    with pytest.raises(HarnessPathError, match=r"^'x.md': cannot be written \(No space left on device\)$"):
        ws.write("x.md", "new\n")
    monkeypatch.undo()
    assert ws.tree() == {"x.md": "old\n"} and sorted(p.name for p in ws.root.iterdir()) == ["x.md"]


def test_text_utf8_cannot_hold_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    ws = HarnessWorkspace(tmp_path / "h")
    ws.write("x.md", "old\n")
    with pytest.raises(HarnessPathError, match=r"^'x.md': the text is not valid Unicode \(surrogates not allowed"):
        ws.write("x.md", "half \ud800 written")
    assert ws.tree() == {"x.md": "old\n"} and sorted(p.name for p in ws.root.iterdir()) == ["x.md"]
