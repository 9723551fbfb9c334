"""`HarnessWorkspace.replace_all`: the directory ends holding exactly the tree, without rewriting what is already right
and without following anything a method planted."""

from __future__ import annotations

import os
from pathlib import Path

from evoarena.harness import HarnessWorkspace


def test_keeps_unchanged_files_and_removes_the_rest(tmp_path: Path) -> None:
    ws = HarnessWorkspace(tmp_path / "h")
    ws.replace_all({"system.md": "be brief", "skills/a.md": "A", "memory/old.md": "x", "skills/b.md": "B"})
    inode = (ws.root / "skills" / "a.md").stat().st_ino
    (ws.root / "stray.txt").write_text("left by a method")
    (ws.root / "empty" / "deeper").mkdir(parents=True)
    ws.replace_all({"system.md": "be briefer", "skills/a.md": "A", "notes/new.md": "n"})
    assert ws.tree() == {"notes/new.md": "n", "skills/a.md": "A", "system.md": "be briefer"}
    assert (ws.root / "skills" / "a.md").stat().st_ino == inode  # not rewritten
    assert sorted(p.name for p in ws.root.iterdir()) == ["notes", "skills", "system.md"]  # memory/, empty/ gone


def test_planted_symlinks_are_removed_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.md").write_text("precious")
    ws = HarnessWorkspace(tmp_path / "h")
    os.symlink(outside, ws.root / "skills")  # a directory link
    os.symlink(outside / "keep.md", ws.root / "system.md")  # a file link named like a tree file, same text
    ws.replace_all({"system.md": "precious", "skills/a.md": "A"})
    assert not (ws.root / "skills").is_symlink() and not (ws.root / "system.md").is_symlink()
    assert ws.tree() == {"skills/a.md": "A", "system.md": "precious"}
    assert sorted(p.name for p in outside.iterdir()) == ["keep.md"] and (outside / "keep.md").read_text() == "precious"


def test_same_size_different_text_is_rewritten(tmp_path: Path) -> None:
    ws = HarnessWorkspace(tmp_path / "h")
    ws.replace_all({"system.md": "aaaa"})
    ws.replace_all({"system.md": "bbbb"})
    assert ws.read("system.md") == "bbbb"
