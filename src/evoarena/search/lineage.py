"""The tree an archive's `parent` links make: each candidate's children, depth and clade (itself and every
descendant). Results are copied, never extended in place: a node's own results and its clade's pool stay apart
(HGM's released code appends descendants' results to the parent's own list; that is the bug not to copy)."""

from __future__ import annotations

from collections.abc import Sequence

from evoarena.search.archive import Scored


def children_of(archive: Sequence[Scored]) -> dict[str, list[str]]:
    """id -> ids of the members naming it as parent, in archive order."""
    kids: dict[str, list[str]] = {c.id: [] for c in archive}
    for c in archive:
        if c.parent is not None and c.parent in kids:
            kids[c.parent].append(c.id)
    return kids


def child_counts(archive: Sequence[Scored]) -> dict[str, int]:
    """{id: how many archive members name it as `parent`} for every id of the archive (0 when none); parents that
    are not themselves in the archive are not counted anywhere."""
    return {node: len(kids) for node, kids in children_of(archive).items()}


def depths(archive: Sequence[Scored]) -> dict[str, int]:
    """{id: number of `parent` links from the member up to its root}. A member with no parent, or whose parent is
    not in the archive, is a root (depth 0). A cycle of parent links is an error."""
    parent = {c.id: c.parent for c in archive}
    out: dict[str, int] = {}
    for c in archive:
        path: list[str] = []
        node: str | None = c.id
        while node is not None and node not in out:
            if node in path:
                raise ValueError(f"parent links form a cycle through {node!r}")
            path.append(node)
            up = parent[node]
            node = up if up in parent else None
        base = out[node] + 1 if node is not None else 0
        for k, i in enumerate(reversed(path)):
            out[i] = base + k
    return out


def clade_results(archive: Sequence[Scored]) -> dict[str, tuple[float, ...]]:
    """id -> its own results followed by every descendant's (depth first, archive order), as a new tuple."""
    kids = children_of(archive)
    own = {c.id: c.scores for c in archive}
    out: dict[str, tuple[float, ...]] = {}

    def pool(node: str) -> tuple[float, ...]:
        if node not in out:
            parts = [own[node]]
            stack = list(reversed(kids[node]))
            while stack:
                child = stack.pop()
                parts.append(own[child])
                stack.extend(reversed(kids[child]))
            out[node] = tuple(x for part in parts for x in part)
        return out[node]

    for c in archive:
        pool(c.id)
    return out
