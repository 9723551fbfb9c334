"""Rollback: put an earlier version back into a cell's working harness, and record that it happened."""

from __future__ import annotations

from evoarena.harness.versions import load_tree, resolve_version
from evoarena.harness.workspace import HarnessWorkspace
from evoarena.store import RunStore
from evoarena.store.versions import current_version


def rollback(store: RunStore, cell: str, ref: str) -> str:
    exists, before = current_version(store, cell)
    if not exists:
        raise KeyError(f"no cell {cell!r} in this run")
    vid = resolve_version(store, ref)
    HarnessWorkspace(store.run_dir / "cells" / cell / "harness").replace_all(load_tree(store, vid))
    store.upsert_cell(cell, current_version=vid)
    store.event("rollback", {"from": before, "to": vid}, cell=cell)
    return vid
