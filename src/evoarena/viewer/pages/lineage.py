"""The lineage page (a cell's version graph as inline SVG, its search pool as a tree, each node's scores, the
policy's statistics, manifests and their verdicts, the search's events with their acceptance and the version each
step made) and a version's page (its files, manifest, and diff to its parent or to any other version of the cell)."""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from evoarena.harness import diff_trees, load_tree
from evoarena.report.diff_view import diff_lines
from evoarena.report.lineage_tree import parent_policies
from evoarena.store import queries
from evoarena.store.view_lineage import cell_events, version_counts
from evoarena.viewer.pages.common import header, run_store
from evoarena.viewer.pages.lineage_data import LINEAGE_EVENTS, cell_lineage
from evoarena.viewer.pages.lineage_graph import NODE_H, NODE_W, layout
from evoarena.viewer.pages.paging import int_param
from evoarena.viewer.pages.search_tree import search_tree
from evoarena.viewer.render import page

EVENTS_PAGE = 50


def lineage(request: Request) -> HTMLResponse:
    run_id, store = run_store(request)
    head = header(run_id, store)
    cells = queries.cells(store)
    counts = version_counts(store)
    wanted = request.query_params.get("cell")
    if wanted is not None and wanted not in {c.cell for c in cells}:
        raise HTTPException(404, f"no cell {wanted!r} in run {run_id!r}")
    default = next((c.cell for c in cells if counts.get(c.cell, 0) > 1), cells[0].cell if cells else None)
    chosen = next((c for c in cells if c.cell == (wanted or default)), None)
    context: dict[str, Any] = {"run": head, "cells": cells, "counts": counts, "chosen": chosen}
    if chosen is not None:
        data = cell_lineage(store, chosen, parent_policies(head.spec).get(chosen.condition))
        offset = max(int_param(request, "events", 0) or 0, 0)
        events, n_events = cell_events(store, chosen.cell, LINEAGE_EVENTS, EVENTS_PAGE, offset)
        steps: dict[str, list[str]] = {}
        for n in data.nodes:
            steps.setdefault(n.row.step, []).append(n.id)
        context.update(data=data, graph=layout([n.id for n in data.nodes], [n.row.parent_ids for n in data.nodes]),
                       node_w=NODE_W, node_h=NODE_H, events=events, n_events=n_events, offset=offset,
                       page_size=EVENTS_PAGE, search=search_tree(store, chosen.cell), step_versions=steps)
    return page(request, "lineage.html.j2", **context)


def version(request: Request) -> HTMLResponse:
    run_id, store = run_store(request)
    head = header(run_id, store)
    cell_id, version_id = str(request.path_params["cell"]), str(request.path_params["version"])
    cell = next((c for c in queries.cells(store) if c.cell == cell_id), None)
    if cell is None:
        raise HTTPException(404, f"no cell {cell_id!r} in run {run_id!r}")
    data = cell_lineage(store, cell, parent_policies(head.spec).get(cell.condition))
    node = data.by_id.get(version_id)
    if node is None:
        raise HTTPException(404, f"no version {version_id!r} in cell {cell_id!r}")
    against = request.query_params.get("against") or next((p for p in node.row.parent_ids if p in data.by_id), None)
    if against is not None and against not in data.by_id:
        raise HTTPException(404, f"no version {against!r} in cell {cell_id!r} to diff against")
    tree = load_tree(store, node.id)
    diff = None
    if against is not None:
        diff = diff_lines(diff_trees(load_tree(store, against), tree, against[:12], node.id[:12]))
    return page(request, "lineage_version.html.j2", run=head, data=data, node=node, files=sorted(tree.items()),
                against=against, diff=diff)


ROUTES = [
    Route("/run/{run}/lineage", lineage, name="lineage"),
    Route("/run/{run}/version/{cell}/{version}", version, name="version"),
]
NAV = [("lineage", "lineage")]
