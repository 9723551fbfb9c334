"""The lineage page's selection panel: for the chosen cell, the reason its version was tested, each candidate graded on
val with its mean (the store's val attempts), the one the budget left ungraded and why, and the tie rule."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import parse_spec
from evoarena.store import RunStore
from evoarena.store.selection import TIE_RULE
from evoarena.viewer import create_app


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A token budget that runs out in practice: reflexion's final version goes ungraded, frozen never changes."""
    root = tmp_path_factory.mktemp("view-selection")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVOARENA_CACHE_DIR", str(root.parent / "view-selection-cache"))
        spec = parse_spec({
            "name": "budgeted", "seeds": [0], "methods": [{"name": "frozen"}, {"name": "reflexion"}],
            "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 6, "n_val": 5, "n_test": 10}},
            "models": {"scripted": {"backend": "scripted", "model": "arith-student"}},
            "roles": {"solver": "scripted", "reflector": "scripted"},
            "budget": {"max_tokens": 300}, "protocol": {"select_every": 2}})
        run_experiment(spec, root / "budgeted", probe=False)
    return root


def _panel(root: Path, cell: str) -> str:
    html = TestClient(create_app([root])).get(f"/run/budgeted/lineage?cell={cell}").text
    found = re.search(r'<section class="selection" id="selection">(.*?)</section>', html, re.S)
    assert found, "no selection panel"
    return found.group(1)


def test_the_panel_lists_each_candidate_with_its_val_mean_and_the_ungraded_final(root: Path) -> None:
    store = RunStore(root / "budgeted", read_only=True)
    cell = "reflexion__scripted__s0"
    row = store.query_one("SELECT selected_version, current_version FROM cells WHERE cell=?", [cell])
    assert row is not None
    graded = {r["version_id"]: r["m"] for r in store.query(
        "SELECT version_id, AVG(score) AS m FROM attempts WHERE cell=? AND phase='select' GROUP BY version_id", [cell])}
    panel = _panel(root, cell)
    rows = dict(re.findall(r'<tr data-version="(\w+)".*?<td class="num">(.*?)</td>', panel, re.S))
    assert set(graded) < set(rows) and row["current_version"] in rows
    for vid, mean in graded.items():
        assert rows[vid].strip() == f"{mean:.3f}"
    assert "skipped: the budget could not pay for 5 val tasks" in rows[row["current_version"]]
    assert "was not scored on val, the budget ran out" in panel and "selection-warning" in panel
    assert re.search(rf'<tr data-version="{row["selected_version"]}" class="selected">', panel)
    assert TIE_RULE in panel
    store.close()


def test_a_cell_that_never_changed_says_the_initial_was_kept(root: Path) -> None:
    panel = _panel(root, "frozen__scripted__s0")
    assert "initial kept: the method made no new version" in panel and "selection-warning" not in panel
