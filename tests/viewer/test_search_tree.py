"""The search tree in Chromium, on scripted GEPA and HGM runs: the drawn tree is the method's own pool (GEPA's
pool.json, HGM's tree state in the cell's last version) — one node per candidate, one edge per parent link, each
accepted candidate's score its val mean — a click opens the version its step made (its diff shows the candidate join
the pool), and a proposal turned away is a ✗
leaf under its parent that opens the call that proposed it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from view_server import Server

from evoarena.harness import load_tree
from evoarena.methods.gepa.pool import read_pool
from evoarena.methods.hgm.method import read_tree
from evoarena.protocol.run.runner import run_experiment
from evoarena.search.tree_log import SEARCH_NODE, SearchNode
from evoarena.spec import load_spec
from evoarena.store import RunStore

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
GEPA, HGM = "gepa__scripted__s0", "hgm__scripted__s0"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("view-search")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVOARENA_CACHE_DIR", str(root.parent / "view-search-cache"))
        for recipe, run, keep in (("gepa-vs-library.yaml", "gepa", "gepa"), ("hgm-arith.yaml", "hgm", "hgm")):
            spec = load_spec(RECIPES / recipe).with_model("scripted")
            spec = spec.model_copy(update={"methods": [m for m in spec.methods if m.condition in ("frozen", keep)]})
            run_experiment(spec, root / run, probe=False)
    with Server([root]) as s:
        yield s


def _last_tree(server: Server, run: str, cell: str) -> tuple[RunStore, dict[str, str]]:
    store = RunStore(server.app.state.catalog.entry(run).path, read_only=True)
    current = next(c["current_version"] for c in store.cells() if c["cell"] == cell)
    return store, load_tree(store, current)


def _drawn(page: Any) -> dict[str, tuple[str, str | None]]:
    """{node id: (accepted yes/no, href)} of the drawn search tree."""
    got = page.locator("#search-svg a.node").evaluate_all(
        "ns => ns.map(n => [n.dataset.node, n.dataset.accepted, n.getAttribute('href')])")
    return {n: (a, h) for n, a, h in got}


def _edges(page: Any) -> set[tuple[str, str]]:
    return {(p, c) for p, c in page.locator("#search-svg path.edge").evaluate_all(
        "es => es.map(e => [e.dataset.parent, e.dataset.child])")}


def test_gepas_pool_is_drawn_as_its_tree(server: Server, page: Any, shoot: Any) -> None:
    store, tree = _last_tree(server, "gepa", GEPA)
    pool = read_pool(tree)
    assert pool is not None and len(pool.candidates) >= 3
    page.goto(f"{server.url}/run/gepa/lineage?cell={GEPA}")
    drawn = _drawn(page)
    assert set(drawn) == {c.id for c in pool.candidates} and all(a == "yes" for a, _ in drawn.values())
    assert _edges(page) == {(c.parent, c.id) for c in pool.candidates if c.parent}
    for c in pool.candidates[1:]:
        val = sum(c.scores.values()) / len(c.scores)
        assert page.locator(f"#search-svg a.node[data-node='{c.id}'] text.val").text_content().startswith(
            f"{val:.2f} val mean")
    last = pool.candidates[-1]
    with page.expect_navigation():
        page.locator(f"#search-svg a.node[data-node='{last.id}']").click()
    version = page.locator("#version-id").inner_text()
    made = read_pool(load_tree(store, version))  # the version its step made: the pool with the candidate in it
    assert made is not None and made.candidates[-1] == last
    assert "not the expression" in " ".join(page.locator("#diff span.add").all_inner_texts())
    page.goto(f"{server.url}/run/gepa/lineage?cell={GEPA}")
    accepted = page.locator("#events tr[data-kind='search_node'] td.accepted")
    assert accepted.count() == len(pool.candidates) and all("yes" in t for t in accepted.all_inner_texts())
    assert page.locator("#events tr[data-kind='search_node'] a.step-version").count() >= len(pool.candidates) - 1

    # a proposal turned away, as GEPA logs it at the step of a proposer call
    call = store.query_one("SELECT id, unit FROM calls WHERE cell=? AND role='proposer' ORDER BY id", [GEPA])
    store.close()
    writer = RunStore(server.app.state.catalog.entry("gepa").path)
    writer.event(SEARCH_NODE, SearchNode(node=None, parents=[last.id], accepted=False, score=1.0,
                                         score_label="minibatch sum (parent 2)", text="a rejected rewrite",
                                         component="system.md").payload(), GEPA, call["unit"])
    writer.close()
    page.goto(f"{server.url}/run/gepa/lineage?cell={GEPA}")
    rejected = {n: h for n, (a, h) in _drawn(page).items() if a == "no"}
    assert len(rejected) == 1
    node, href = next(iter(rejected.items()))
    assert (last.id, node) in _edges(page) and href.endswith(f"/call/{call['id']}")
    assert "a rejected rewrite" in page.locator(f"#search-svg a.node[data-node='{node}'] title").text_content()
    shoot(page, "search-tree")


def test_hgms_tree_is_drawn_with_each_node_linked_to_its_version(server: Server, page: Any) -> None:
    store, tree = _last_tree(server, "hgm", HGM)
    state = read_tree(tree)
    store.close()
    assert state is not None and len(state.nodes) >= 3
    page.goto(f"{server.url}/run/hgm/lineage?cell={HGM}")
    drawn = _drawn(page)
    assert set(drawn) == {n.id for n in state.nodes}
    assert _edges(page) == {(n.parent, n.id) for n in state.nodes if n.parent}
    for n in state.nodes:
        assert drawn[n.id][1].endswith(f"/{n.version}")
        own = f"{sum(n.results.values()) / len(n.results):.2f}" if n.results else "not scored"
        assert page.locator(f"#search-svg a.node[data-node='{n.id}'] text.val").text_content().startswith(own)
