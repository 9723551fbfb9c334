import os
from pathlib import Path

import pytest

from evoarena.harness import (
    HarnessPathError,
    HarnessWorkspace,
    Manifest,
    diff_trees,
    lineage,
    load_tree,
    resolve_version,
    rollback,
    save_version,
    tree_hash,
)
from evoarena.store import RunStore


@pytest.mark.parametrize("bad", ["/etc/passwd", "../x.md", "a/../../x.md", "skills/../..", "C:/x", "a\\b", ""])
def test_writes_outside_the_root_are_refused(tmp_path: Path, bad: str) -> None:
    ws = HarnessWorkspace(tmp_path / "h")
    with pytest.raises(HarnessPathError):
        ws.write(bad, "x")
    assert not (tmp_path / "x.md").exists()


def test_symlinks_are_refused_for_writes_and_snapshots(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    ws = HarnessWorkspace(tmp_path / "h")
    os.symlink(outside, ws.root / "memory")
    with pytest.raises(HarnessPathError, match="symlink"):
        ws.write("memory/notes.md", "escape")
    assert not (outside / "notes.md").exists()
    with pytest.raises(HarnessPathError, match="symlink"):
        ws.tree()


def test_snapshot_is_content_addressed_and_normalised(tmp_path: Path) -> None:
    a = {"system.md": "hi\r\n", "skills/x/SKILL.md": "s"}
    b = {"skills/x/SKILL.md": "s", "system.md": "hi\n"}
    assert tree_hash(a) == tree_hash(b)
    assert tree_hash(a) != tree_hash({**b, "system.md": "hello\n"})


def test_save_checkout_diff_and_rollback(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    store.upsert_cell("c", condition="x", method="m", model="mm", seed=0, status="running")
    ws = HarnessWorkspace(store.run_dir / "cells" / "c" / "harness")
    ws.write("system.md", "one\n")
    v1 = save_version(store, "c", ws.tree(), parents=[], method="m", manifest=Manifest(intent="start"), step="init")
    ws.write("system.md", "two\n")
    ws.write("memory/notes.md", "- lesson\n")
    v2 = save_version(store, "c", ws.tree(), parents=[v1], method="m",
                      manifest=Manifest(intent="learn", expected_fixes=["t1"]), step="s1")
    assert v1 != v2 and resolve_version(store, v2[:8]) == v2
    d = diff_trees(load_tree(store, v1), load_tree(store, v2), "v1", "v2")
    assert "-one" in d and "+two" in d and "+++ v2/memory/notes.md" in d
    rows = lineage(store, "c")
    assert [r["id"] for r in rows] == [v1, v2]
    assert rows[1]["parent_ids"] == [v1] and rows[1]["manifest"]["expected_fixes"] == ["t1"]
    assert rollback(store, "c", v1[:10]) == v1
    assert ws.tree() == {"system.md": "one\n"}
    assert store.query("SELECT kind FROM events")[-1]["kind"] == "rollback"


def test_a_tree_reads_newlines_as_text_mode_does(tmp_path: Path) -> None:
    r"""`\r\n` and a lone `\r` read as `\n`, as a text-mode read always gave, so versions hash as they did."""
    ws = HarnessWorkspace(tmp_path / "h")
    (ws.root / "a.md").write_bytes(b"x\r\ny\rz\n")
    assert ws.tree() == {"a.md": "x\ny\nz\n"} and ws.read("a.md") == "x\ny\nz\n"
