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


def depths(archive: Sequence[Scored]) -> dict[str, int]:
    """id -> edges to its root (a member whose parent is None or not in the archive)."""
    by_id = {c.id: c for c in archive}
    out: dict[str, int] = {}
    for c in archive:
        seen, node, d = {c.id}, c, 0
        while node.parent is not None and node.parent in by_id:
            node = by_id[node.parent]
            if node.id in seen:
                raise ValueError(f"archive: the parent links of {c.id!r} make a cycle")
            seen.add(node.id)
            d += 1
        out[c.id] = d
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
