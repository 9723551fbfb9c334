"""A cell's harness versions as an ASCII tree (`evoarena versions RUN`): each node with the scores of the attempts
made with it — practice, rollouts, validation, test — and, where it has descendants, its clade's means (its own
rollout and val results pooled with every descendant's: HGM's clade estimate), the selected version starred."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from evoarena.search import Scored
from evoarena.search.dgm import dgm_weights
from evoarena.search.lineage import children_of, clade_results
from evoarena.search.ucb import ucb_scores
from evoarena.store import RunStore
from evoarena.store.queries import version_results
from evoarena.store.versions import VersionRow, cell_versions

_PHASES = (("practice", "practice"), ("rollout", "rollouts"), ("select", "val"), ("test", "test"))


@dataclass(frozen=True)
class NodeStats:
    """What the tree shows of one version."""

    id: str
    parent: str | None
    step: str
    intent: str
    results: Mapping[str, Sequence[float]]  # phase -> scores
    children: int
    clade_val: tuple[float, ...]
    clade_rollouts: tuple[float, ...] = ()
    policy: str = ""  # the parent policy's own statistic of this node (with_policy), e.g. "UCB 1.23"


def node_stats(versions: Sequence[VersionRow], results: Mapping[str, Mapping[str, Sequence[float]]]
               ) -> list[NodeStats]:
    """One record per version (first parent as the tree parent; a merge's other parents are listed in its intent)."""
    known = {v.id for v in versions}
    parents = [next((p for p in v.parent_ids if p in known), None) for v in versions]

    def pools(phase: str) -> dict[str, tuple[float, ...]]:
        return clade_results([Scored(v.id, tuple(results.get(v.id, {}).get(phase, ())), parent)
                              for v, parent in zip(versions, parents, strict=True)])

    kids = children_of([Scored(v.id, (), parent) for v, parent in zip(versions, parents, strict=True)])
    val, rollouts = pools("select"), pools("rollout")
    return [NodeStats(v.id, parent, v.step, str(v.manifest.get("intent", "")), results.get(v.id, {}),
                      len(kids[v.id]), val[v.id], rollouts[v.id]) for v, parent in zip(versions, parents, strict=True)]


def with_policy(stats: Sequence[NodeStats], policy: str | None) -> list[NodeStats]:
    """The nodes with the statistic a lineage policy ranks them by, on their rollout results: `ucb` (EvoTest's UCB,
    N = nodes) or `dgm` (DGM's unnormalised parent weight); other policies' statistics — own means, clade means —
    are already shown."""
    archive = [Scored(s.id, tuple(s.results.get("rollout", ())), s.parent) for s in stats]
    if policy == "ucb":
        return [replace(s, policy=f"UCB {u:.2f}") for s, u in zip(stats, ucb_scores(archive), strict=True)]
    if policy == "dgm":
        return [replace(s, policy=f"DGM weight {w:.2f}") for s, w in zip(stats, dgm_weights(archive), strict=True)]
    return list(stats)


def render(stats: Sequence[NodeStats], selected: str | None = None, width: int = 12) -> str:
    """The tree, roots first, children in the order they were made."""
    by_parent: dict[str | None, list[NodeStats]] = {}
    for s in stats:
        by_parent.setdefault(s.parent, []).append(s)
    lines: list[str] = []

    def walk(node: NodeStats, prefix: str, last: bool, root: bool) -> None:
        branch = "" if root else ("└─ " if last else "├─ ")
        star = "★ " if node.id == selected else ""
        lines.append(f"{prefix}{branch}{star}{node.id[:width]}  {_scores(node)}  [{node.step}] {node.intent}".rstrip())
        kids = by_parent.get(node.id, [])
        for i, kid in enumerate(kids):
            walk(kid, prefix + ("" if root else ("   " if last else "│  ")), i == len(kids) - 1, False)

    for root in by_parent.get(None, []):
        walk(root, "", True, True)
    return "\n".join(lines)


def _scores(node: NodeStats) -> str:
    parts = [f"{label} {_mean(node.results[phase]):.2f} (n={len(node.results[phase])})"
             for phase, label in _PHASES if node.results.get(phase)]
    for label, pool in (("clade rollouts", node.clade_rollouts), ("clade val", node.clade_val)):
        if node.children and pool:
            parts.append(f"{label} {_mean(pool):.2f} (n={len(pool)})")
    if node.policy:
        parts.append(node.policy)
    return "; ".join(parts) or "not graded"


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def cell_tree(store: RunStore, cell: str, selected: str | None = None, policy: str | None = None) -> str:
    """The cell's tree as text, with `policy`'s statistic per node when it has one (`with_policy`)."""
    return render(with_policy(node_stats(cell_versions(store, cell), version_results(store, cell)), policy), selected)


def parent_policies(spec: Mapping[str, Any]) -> dict[str, str]:
    """{condition: parent_policy} of the spec's methods that take one (hgm), for `with_policy`."""
    found = {}
    for m in spec.get("methods", []):
        policy = (m.get("params") or {}).get("parent_policy")
        if isinstance(policy, str):
            found[str(m.get("label") or m.get("name"))] = policy
    return found
