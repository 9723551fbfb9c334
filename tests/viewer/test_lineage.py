"""The lineage page and a version's page, in a real browser, on scripted runs with real lineages: the arith-basics run
(reflexion's manifests name the tasks they should fix) and EvoTest on the maze (a branching tree of 12 versions in its
cell, its UCB statistics in `evotest_episode` events). The graph has one node per stored version and one edge per
parent link; a node opens its version, whose diff to its parent (or to any version chosen) is the stored trees'."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from view_server import Server

from evoarena.harness import diff_trees, load_tree
from evoarena.protocol.run.runner import run_experiment
from evoarena.report.diff_view import diff_lines
from evoarena.spec import load_spec
from evoarena.store import RunStore
from evoarena.viewer.pages.lineage_graph import NODE_H, layout

RECIPES = Path(__file__).resolve().parents[2] / "recipes"


@pytest.fixture(scope="module")
def evotest_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("view-lineage")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVOARENA_CACHE_DIR", str(root.parent / "view-lineage-cache"))
        spec = load_spec(RECIPES / "evotest-maze.yaml").with_model("scripted")
        spec = spec.model_copy(update={  # one seed, six episodes, one test maze: ~2 s, a tree of 12 versions
            "seeds": [0], "methods": [m for m in spec.methods if m.label in ("static", "evotest-paper")],
            "protocol": spec.protocol.model_copy(update={"epochs": 6}),
            "benchmark": spec.benchmark.model_copy(update={"params": {**spec.benchmark.params, "n_test": 1}})})
        run_experiment(spec, root / "evotest-maze", probe=False)
    return root


@pytest.fixture(scope="module")
def server(runs_root: Path, evotest_root: Path) -> Iterator[Server]:
    with Server([runs_root, evotest_root]) as s:
        yield s


def _store(server: Server, run: str) -> RunStore:
    return RunStore(server.app.state.catalog.entry(run).path, read_only=True)


def _versions(store: RunStore, cell: str) -> dict[str, list[str]]:
    """{version id: parent ids} of a cell, straight from the table."""
    rows = store.query("SELECT id, parent_ids FROM harness_versions WHERE cell=?", [cell])
    return {str(r["id"]): json.loads(str(r["parent_ids"])) for r in rows}


def test_the_graph_has_a_node_per_stored_version_in_every_cell(server: Server, page: Any, shoot: Any) -> None:
    for run in ("arith-basics", "evotest-maze"):
        store = _store(server, run)
        cells = [str(c["cell"]) for c in store.cells()]
        page.goto(f"{server.url}/run/{run}/lineage")
        for cell in cells:
            if page.locator("#lineage-svg").get_attribute("data-cell") != cell:
                with page.expect_navigation():
                    page.select_option("#cell-select", cell)  # the key interaction: choosing a cell
            assert page.locator("#lineage-svg").get_attribute("data-cell") == cell
            stored = _versions(store, cell)
            drawn = page.locator("#lineage-svg a.node").evaluate_all(
                "ns => ns.map(n => n.getAttribute('data-version'))")
            assert len(drawn) == len(stored) and set(drawn) == set(stored), cell
            links = sum(len([p for p in ps if p in stored]) for ps in stored.values())
            assert page.locator("#lineage-svg path.edge").count() == links, cell
            assert page.locator("#versions tbody tr").count() == len(stored)
            selected = next(c["selected_version"] for c in store.cells() if c["cell"] == cell)
            if selected:
                assert page.locator(f"#lineage-svg a.node.selected[data-version='{selected}']").count() == 1
        store.close()
    page.goto(f"{server.url}/run/evotest-maze/lineage?cell=evotest-paper__scripted__s0")
    assert page.locator("#events tbody tr").count() > 0 and "ucb" in page.locator("#events").inner_text()
    shoot(page, "lineage")


def test_a_manifest_and_its_named_tasks_are_shown(server: Server, page: Any) -> None:
    store = _store(server, "arith-basics")
    cell = "reflexion__scripted__s0"
    rows = store.query("SELECT id, manifest FROM harness_versions WHERE cell=?", [cell])
    named = [(str(r["id"]), json.loads(str(r["manifest"]))) for r in rows]
    store.close()
    page.goto(f"{server.url}/run/arith-basics/lineage?cell={cell}")
    for vid, manifest in named:
        row = page.locator(f"#versions tr[data-version='{vid}']").inner_text()
        assert manifest["intent"] in row
        for task in manifest["expected_fixes"]:
            assert task in row and "unmeasured" in row  # this run never attempts a fixed task again


def test_clicking_a_node_shows_its_diff_to_its_parent_and_to_any_other(server: Server, page: Any, shoot: Any
                                                                       ) -> None:
    run, cell = "evotest-maze", "evotest-paper__scripted__s0"
    store = _store(server, run)
    versions = _versions(store, cell)
    child = next(v for v, ps in versions.items() if ps and load_tree(store, v) != load_tree(store, ps[0]))
    parent = versions[child][0]
    root = next(v for v, ps in versions.items() if not ps)
    page.goto(f"{server.url}/run/{run}/lineage?cell={cell}")
    with page.expect_navigation():
        page.locator(f"#lineage-svg a.node[data-version='{child}']").click()
    assert page.locator("#version-id").inner_text() == child
    assert page.locator("#diff-against").inner_text() == parent[:12]
    old, new = load_tree(store, parent), load_tree(store, child)
    added = {f"+{line}" for path in new for line in new[path].splitlines()
             if line not in old.get(path, "").splitlines()}
    assert added, "the child changes no line"
    shown = page.locator("#diff span.add").all_inner_texts()
    assert added & set(shown)
    assert page.locator(f"#relatives a.parent[href$='/{parent}']").count() == 1
    shoot(page, "version")

    other = next(v for v in versions if v not in (child, parent, root) and load_tree(store, v) != new)
    with page.expect_navigation():
        page.select_option("#against-select", other)
    assert page.url.endswith(f"?against={other}")
    expected = diff_lines(diff_trees(load_tree(store, other), new, other[:12], child[:12]))
    assert page.locator("#diff span").all_inner_texts() == [line for _, line in expected]
    assert page.locator("#diff span.del").count() == sum(kind == "del" for kind, _ in expected)

    page.goto(f"{server.url}/run/{run}/version/{cell}/{root}")
    assert page.locator("#diff").count() == 0  # a root has no parent to diff against
    with page.expect_navigation():
        page.select_option("#against-select", child)
    removed = {"-" + line[1:] for line in added}
    assert removed & set(page.locator("#diff span.del").all_inner_texts())  # the child's lines, removed
    store.close()


def test_an_unknown_version_or_cell_is_a_404(server: Server) -> None:
    from starlette.testclient import TestClient

    client = TestClient(server.app)
    cell = "reflexion__scripted__s0"
    assert client.get(f"/run/arith-basics/version/{cell}/{'0' * 64}").status_code == 404
    store = _store(server, "arith-basics")
    vid = next(iter(_versions(store, cell)))
    store.close()
    assert client.get(f"/run/arith-basics/version/{cell}/{vid}").status_code == 200
    assert client.get(f"/run/arith-basics/version/{cell}/{vid}?against={'0' * 64}").status_code == 404
    assert client.get(f"/run/arith-basics/version/no-such-cell/{vid}").status_code == 404
    assert client.get("/run/arith-basics/lineage?cell=no-such-cell").status_code == 404


def test_diff_lines_classes_by_hunk_counts() -> None:
    """A removed line reading "-- x" stays a removed line (the hunk's counts say so), not a file header."""
    text = diff_trees({"a.md": "keep\n-- x\n"}, {"a.md": "keep\n++ y\n"})
    assert diff_lines(text) == [("file", "--- a/a.md"), ("file", "+++ b/a.md"), ("hunk", "@@ -1,2 +1,2 @@"),
                                ("ctx", " keep"), ("del", "--- x"), ("add", "+++ y")]


def test_the_layout_puts_a_node_below_all_its_parents_and_draws_an_edge_from_each() -> None:
    ids = ["r", "a", "b", "c", "m"]  # m merges b (generation 2) and a (generation 1)
    parents = [[], ["r"], ["a"], ["r"], ["b", "a"]]
    graph = layout(ids, parents)
    depth = {n.id: n.depth for n in graph.nodes}
    assert depth == {"r": 0, "a": 1, "c": 1, "b": 2, "m": 3}
    assert [(e.parent, e.child, e.first) for e in graph.edges if e.child == "m"] == [("b", "m", True),
                                                                                   ("a", "m", False)]
    assert len(graph.edges) == 5
    boxes = {n.id: n for n in graph.nodes}
    assert boxes["a"].y == boxes["c"].y and boxes["a"].x < boxes["c"].x  # a row keeps the order they were made
    assert graph.height >= boxes["m"].y + NODE_H


def test_evotests_configuration_tree_is_drawn_as_its_search_tree(server: Server, page: Any) -> None:
    """EvoTest's nodes (its state in the cell's last version) are the search tree's: one per node, an edge per
    parent, each linked to the version it was last played as."""
    from evoarena.methods.evotest.state import read_state

    run, cell = "evotest-maze", "evotest-paper__scripted__s0"
    store = _store(server, run)
    current = next(c["current_version"] for c in store.cells() if c["cell"] == cell)
    state = read_state(load_tree(store, current))
    store.close()
    assert state is not None and len(state.nodes) > 2
    page.goto(f"{server.url}/run/{run}/lineage?cell={cell}")
    drawn = page.locator("#search-svg a.node").evaluate_all(
        "ns => ns.map(n => [n.dataset.node, n.getAttribute('href') || ''])")
    assert {n for n, _ in drawn} == {n.id for n in state.nodes}
    edges = page.locator("#search-svg path.edge").evaluate_all(
        "es => es.map(e => e.dataset.parent + '>' + e.dataset.child)")
    assert set(edges) == {f"{n.parent}>{n.id}" for n in state.nodes if n.parent}
    hrefs = dict(drawn)
    assert all(hrefs[n.id].endswith(f"/{n.versions[-1]}") for n in state.nodes if n.versions)
