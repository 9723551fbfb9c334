"""A cell's search pool as the tree it is, from its `search_node` events (search/tree_log.py): one node per pool id
(the latest event about it gives its score; the first its parents and the step it was proposed at) and one leaf per
proposal turned away, laid out like the lineage graph; each node links to the harness version it became, else to
the update call of the step that proposed it."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

from evoarena.search.tree_log import SEARCH_NODE, SearchNode
from evoarena.store import RunStore
from evoarena.store.view_lineage import cell_events, unit_versions, update_calls
from evoarena.viewer.pages.lineage_graph import Layout, layout

MAX_NODES = 500  # a pool bigger than this is drawn from its first events only


@dataclass(frozen=True)
class TreeNode:
    """One candidate of the pool: `id` its pool id ("#<event>" for a proposal turned away), its latest record, the
    unit (practice step) it was proposed at, and where a click takes you."""

    id: str
    record: SearchNode
    parents: tuple[str, ...]
    unit: str | None
    version: str | None  # the harness version it became (or the first version its step made)
    call: int | None  # the first update call of its step


@dataclass(frozen=True)
class SearchTree:
    nodes: tuple[TreeNode, ...]
    graph: Layout
    cut: bool  # more than MAX_NODES events

    @property
    def by_id(self) -> dict[str, TreeNode]:
        return {n.id: n for n in self.nodes}


def search_tree(store: RunStore, cell: str) -> SearchTree | None:
    """The cell's pool, or None when its method logs no `search_node` events."""
    events, total = cell_events(store, cell, (SEARCH_NODE,), MAX_NODES)
    if not events:
        return None
    first: dict[str, tuple[SearchNode, str | None]] = {}
    latest: dict[str, SearchNode] = {}
    for e in events:
        try:
            rec = SearchNode.model_validate(e.payload)
        except ValidationError:
            continue
        key = rec.node if rec.node is not None else f"#{e.id}"
        first.setdefault(key, (rec, e.unit))
        latest[key] = rec
    calls = update_calls(store, cell)
    initial = next(iter(unit_versions(store, cell, "init")), None)
    nodes = []
    for key, (rec, unit) in first.items():
        now = latest[key]
        made = unit_versions(store, cell, unit) if unit and rec.accepted else []
        # a root the method seeded its pool with is the initial harness; another accepted node, what its step made
        version = now.version or rec.version or (initial if not rec.parents else next(iter(made), None))
        step_calls = calls.get(unit or "", [])
        nodes.append(TreeNode(key, now, tuple(rec.parents), unit, version, step_calls[0].id if step_calls else None))
    graph = layout([n.id for n in nodes], [list(n.parents) for n in nodes])
    return SearchTree(tuple(nodes), graph, total > len(events))
