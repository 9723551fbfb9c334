"""HGM's selection (Huxley-Gödel Machine, arXiv 2510.21614; metauto-ai/HGM @013872d, hgm.py and tree.py): which
node to expand — Thompson sampling over each node's *clade* (its own 0/1 results pooled with all its descendants'),
among nodes with results and a mean above 0 — which node to evaluate next — Thompson sampling over its *own*
results — and when to expand rather than evaluate: `n_evals ** alpha >= nodes - 1 + pending`, alpha = 0.6.

As released, a Beta(1 + successes, 1 + failures) per node, argmax of the draws (scores count as their sum, the rest
as failures, as `np.sum` does for 0/1 lists). Not taken over: the optional cool-down (off by default there) and the
pseudo-descendant cap (10 000 by default, never reached at 800 evaluations); the in-place append of descendants'
results to a node's own list (a bug: `lineage.clade_results` copies).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from evoarena.search.archive import Scored
from evoarena.search.dgm import DGMParent
from evoarena.search.lineage import clade_results
from evoarena.search.ucb import EvoTestUCB

#: HGM's expansion exponent (config.yaml `optimization.alpha`).
ALPHA = 0.6


class NothingToExpand(ValueError):
    """No node has results with a mean above 0 (HGM only expands those)."""


def expand_now(n_evals: int, nodes: int, pending: int = 0, alpha: float = ALPHA) -> bool:
    """HGM's infinite-armed-bandit rule: grow the tree while `n_evals ** alpha` keeps ahead of its size (`nodes`
    counts the root; `pending` expansions not yet landed)."""
    return float(n_evals) ** alpha >= nodes - 1 + pending


def expandable(archive: Sequence[Scored]) -> list[Scored]:
    """The nodes HGM may expand: evaluated at least once, with a mean above 0."""
    return [c for c in archive if c.scores and c.mean > 0]


def thompson(results: Sequence[Sequence[float]], rng: random.Random) -> int:
    """Index of the largest draw from Beta(1 + sum, 1 + len - sum) over each result list (ties: the first)."""
    draws = [rng.betavariate(1 + sum(r), 1 + len(r) - sum(r)) for r in results]
    return max(range(len(draws)), key=draws.__getitem__)


@dataclass(frozen=True)
class CladeThompson:
    """HGM's parent: Thompson sampling over clade results, among expandable nodes."""

    def select(self, archive: Sequence[Scored], rng: random.Random) -> Scored:
        nodes = expandable(archive)
        if not nodes:
            raise NothingToExpand("no node has results with a mean above 0")
        pools = clade_results(archive)
        return nodes[thompson([pools[n.id] for n in nodes], rng)]


@dataclass(frozen=True)
class NodeThompson:
    """Thompson sampling over each node's own results, among expandable nodes: the node-level baseline of the
    seed's synthetic-tree study (and, over every node with tasks left, HGM's choice of what to evaluate)."""

    def select(self, archive: Sequence[Scored], rng: random.Random) -> Scored:
        nodes = expandable(archive)
        if not nodes:
            raise NothingToExpand("no node has results with a mean above 0")
        return nodes[thompson([n.scores for n in nodes], rng)]


@dataclass(frozen=True)
class GreedyExpandable:
    """The greedy baseline of the seed's synthetic-tree study: the expandable node with the best own mean (the
    earliest among ties; no draw)."""

    def select(self, archive: Sequence[Scored], rng: random.Random) -> Scored:
        nodes = expandable(archive)
        if not nodes:
            raise NothingToExpand("no node has results with a mean above 0")
        return max(nodes, key=lambda c: c.mean)


class _AmongAll(Protocol):
    def select_among(self, archive: Sequence[Scored], eligible: Sequence[Scored],
                     rng: random.Random) -> Scored: ...


@dataclass(frozen=True)
class AmongExpandable:
    """Another lineage policy (DGM's parent sampling, EvoTest's UCB) run inside HGM's loop: it chooses among the
    nodes HGM may expand, each scored as in the whole tree — so the policies differ only in the choice."""

    inner: _AmongAll

    def select(self, archive: Sequence[Scored], rng: random.Random) -> Scored:
        nodes = expandable(archive)
        if not nodes:
            raise NothingToExpand("no node has results with a mean above 0")
        return self.inner.select_among(archive, nodes, rng)


#: The parent policies an HGM search can run with: HGM's own, the study's two baselines, DGM's and EvoTest's.
PARENT_POLICIES: dict[str, CladeThompson | NodeThompson | GreedyExpandable | AmongExpandable] = {
    "clade": CladeThompson(), "node": NodeThompson(), "greedy": GreedyExpandable(),
    "dgm": AmongExpandable(DGMParent()), "ucb": AmongExpandable(EvoTestUCB())}


def posterior_mean(results: Sequence[float]) -> float:
    """(1 + successes) / (2 + evaluations): a node's own results under a Beta(1, 1) prior (the final pick)."""
    return (1 + sum(results)) / (2 + len(results))


def to_evaluate(archive: Sequence[Scored], rng: random.Random) -> Scored:
    """HGM's next node to evaluate: Thompson sampling over own results (an unevaluated node draws from Beta(1, 1));
    the caller passes only nodes with tasks left."""
    if not archive:
        raise ValueError("nothing to evaluate")
    return archive[thompson([c.scores for c in archive], rng)]
