"""A cell's version graph laid out for a server-drawn SVG: a node's row is its generation (the longest chain of
parents above it), nodes spread evenly across their row in the order of their parents' places (then the order they
were made), and one edge from every parent a node has (a merge draws several)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

NODE_W, NODE_H = 156, 58  # a node's box
GAP_X, GAP_Y = 22, 44  # between boxes of a row, between rows
MARGIN = 12


@dataclass(frozen=True)
class Placed:
    """A node's box: its top-left corner and its generation."""

    id: str
    x: float
    y: float
    depth: int

    @property
    def cx(self) -> float:
        return self.x + NODE_W / 2


@dataclass(frozen=True)
class Edge:
    """From the bottom of the parent's box to the top of the child's; `first` is the child's first parent."""

    parent: str
    child: str
    path: str  # the SVG path's `d`
    first: bool


@dataclass(frozen=True)
class Layout:
    nodes: tuple[Placed, ...]  # in the order given
    edges: tuple[Edge, ...]
    width: float
    height: float


def generations(ids: Sequence[str], parents: Sequence[Sequence[str]]) -> dict[str, int]:
    """Per node the length of its longest chain of (known) parents: roots 0. A cycle (never made by content-addressed
    versions, guarded all the same) is cut where it closes."""
    known = dict(zip(ids, parents, strict=True))
    depth: dict[str, int] = {}

    def visit(node: str, path: frozenset[str]) -> int:
        if node not in depth:
            above = [visit(p, path | {node}) for p in known[node] if p in known and p not in path]
            depth[node] = 1 + max(above) if above else 0
        return depth[node]

    for node in ids:
        visit(node, frozenset())
    return depth


def layout(ids: Sequence[str], parents: Sequence[Sequence[str]]) -> Layout:
    """The boxes and edges of the graph of `ids` (in the order they were made) with their `parents`."""
    depth = generations(ids, parents)
    parents_of = {i: [p for p in ps if p in depth] for i, ps in zip(ids, parents, strict=True)}
    made = {node: n for n, node in enumerate(ids)}
    rows: dict[int, list[str]] = {}
    for node in ids:
        rows.setdefault(depth[node], []).append(node)
    place: dict[str, float] = {}  # a node's index in its row, the key its children sort by
    for d in sorted(rows):
        def key(node: str) -> tuple[float, int]:
            ps = parents_of[node]
            return (sum(place[p] for p in ps) / len(ps) if ps else -1.0, made[node])
        rows[d].sort(key=key)
        for i, node in enumerate(rows[d]):
            place[node] = i
    widest = max((len(r) for r in rows.values()), default=0)
    width = 2 * MARGIN + widest * NODE_W + max(widest - 1, 0) * GAP_X
    boxes: dict[str, Placed] = {}
    for d, row in rows.items():
        used = len(row) * NODE_W + (len(row) - 1) * GAP_X
        left = (width - used) / 2
        for i, node in enumerate(row):
            boxes[node] = Placed(node, left + i * (NODE_W + GAP_X), MARGIN + d * (NODE_H + GAP_Y), d)
    edges = [Edge(p, node, _curve(boxes[p], boxes[node]), n == 0)
             for node in ids for n, p in enumerate(parents_of[node])]
    height = 2 * MARGIN + len(rows) * NODE_H + max(len(rows) - 1, 0) * GAP_Y
    return Layout(tuple(boxes[i] for i in ids), tuple(edges), width, height)


def _curve(parent: Placed, child: Placed) -> str:
    x1, y1, x2, y2 = parent.cx, parent.y + NODE_H, child.cx, child.y
    mid = (y1 + y2) / 2
    return f"M{x1:.1f},{y1:.1f} C{x1:.1f},{mid:.1f} {x2:.1f},{mid:.1f} {x2:.1f},{y2:.1f}"
