"""HGM's synthetic-tree study (seed 000 §6, its first step; model-free): does clade-level Thompson sampling find
better agents than node-level Thompson sampling or greedy when some branches are "bad now, good descendants"?

A fixed, seeded, unbounded tree, revealed as the search expands it (a node's k-th child, and its j-th evaluation,
draw from streams named by the seed and the node's path, so every arm meets the same tree and the same outcomes: the
arms are compared pair by pair on each seed): the root's true success rate is `p0`; every child of the root starts a
branch, deceptive with probability `deceptive_share` (drift `drift_deceptive` > 0, and its head's own rate lowered
by `penalty`) or plain (drift `drift_plain`); a child's base rate is its parent's base plus N(drift, `sigma`),
clipped to [0.01, 0.99], and its own rate is the base (minus the penalty for a deceptive head). An evaluation is one
Bernoulli draw of a node's own rate on one of its unseen tasks (`tasks` per node); expansions are free. The loop is
HGM's, one step at a time (no pending work): expand when `n_evals ** 0.6 >= nodes - 1` (else, or when no node is
expandable yet, evaluate); the arms differ only in which node they expand — greedy (the best own mean),
node-level TS, clade-level TS, and two other lineage policies among the same expandable nodes: DGM's parent sampling
(sigmoid(10(mean − 0.5)) / (1 + children)) and EvoTest's UCB (mean + α^depth·sqrt(ln N / (1 + children))); what
to evaluate is HGM's own-result TS for all of them. After `budget` evaluations the
pick is the node with the highest posterior mean (1 + s) / (2 + n) of its own results; reported: its true rate, and
its simple regret against the best node the run created.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from evoarena.report.stats import bootstrap_ci
from evoarena.search import Scored
from evoarena.search.clade import PARENT_POLICIES, NothingToExpand, expand_now, posterior_mean, to_evaluate

ARMS = ("greedy", "node-ts", "clade-ts", "dgm", "evotest-ucb")
# arm -> search.PARENT_POLICIES
_POLICY = {"greedy": "greedy", "node-ts": "node", "clade-ts": "clade", "dgm": "dgm", "evotest-ucb": "ucb"}


@dataclass(frozen=True)
class TreeSpec:
    """The synthetic tree and the search budget (defaults: the seed's 800 evaluations; the generator the digest
    infers — root 0.4, sigma 0.05, deceptive heads 0.15 lower with positive drift)."""

    p0: float = 0.4
    sigma: float = 0.05
    deceptive_share: float = 1 / 3
    drift_deceptive: float = 0.05
    drift_plain: float = -0.02
    penalty: float = 0.15
    budget: int = 800
    tasks: int = 60


@dataclass
class _Node:
    id: str
    parent: str | None
    base: float
    true_p: float
    drift: float
    results: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Outcome:
    """One search: the picked node's true rate, the best true rate the run created, and the tree's size."""

    picked: float
    best: float
    nodes: int

    @property
    def regret(self) -> float:
        return self.best - self.picked


def _clip(p: float) -> float:
    return min(0.99, max(0.01, p))


def search(arm: str, seed: int, spec: TreeSpec = TreeSpec()) -> Outcome:  # noqa: B008 - frozen
    """One search of `arm` on the tree of `seed` (node ids are paths: "0", "0.1", "0.1.0", ...)."""
    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r} (known: {', '.join(ARMS)})")
    choice = random.Random(f"{arm}:{seed}")
    nodes = {"0": _Node("0", None, spec.p0, spec.p0, 0.0)}
    kids: dict[str, int] = {"0": 0}
    evals = 0
    while evals < spec.budget:
        archive = [Scored(n.id, tuple(n.results), n.parent) for n in nodes.values()]
        if expand_now(evals, len(nodes)):
            try:
                parent = nodes[PARENT_POLICIES[_POLICY[arm]].select(archive, choice).id]
            except NothingToExpand:
                parent = None
            if parent is not None:
                child = _child(parent, kids[parent.id], seed, spec)
                kids[parent.id] += 1
                nodes[child.id], kids[child.id] = child, 0
                continue
        open_ = [c for c in archive if len(c.scores) < spec.tasks]
        node = nodes[to_evaluate(open_, choice).id]
        outcome = random.Random(f"eval:{seed}:{node.id}:{len(node.results)}").random()
        node.results.append(1.0 if outcome < node.true_p else 0.0)
        evals += 1
    picked = max(nodes.values(), key=lambda n: posterior_mean(n.results))
    return Outcome(picked.true_p, max(n.true_p for n in nodes.values()), len(nodes))


def _child(parent: _Node, k: int, seed: int, spec: TreeSpec) -> _Node:
    """The k-th child of `parent` in the tree of `seed`: the same whichever arm makes it, whenever."""
    cid = f"{parent.id}.{k}"
    world = random.Random(f"tree:{seed}:{cid}")
    head = parent.parent is None
    deceptive = head and world.random() < spec.deceptive_share
    drift = (spec.drift_deceptive if deceptive else spec.drift_plain) if head else parent.drift
    base = _clip(parent.base + world.gauss(drift, spec.sigma))
    own = _clip(base - spec.penalty) if deceptive else base
    return _Node(cid, parent.id, base, own, drift)


@dataclass(frozen=True)
class ArmSummary:
    arm: str
    picked_mean: float
    picked_ci: tuple[float, float]
    regret_mean: float
    regret_ci: tuple[float, float]
    nodes_mean: float
    vs_greedy: float  # mean paired difference of the picked true rate to greedy's on the same trees
    vs_greedy_ci: tuple[float, float]


def _ci(xs: Sequence[float], seed: int) -> tuple[float, float]:
    """95% percentile bootstrap CI of the mean: the report's own (2000 resamples, seeded)."""
    _, low, high = bootstrap_ci(xs, seed=seed)
    return low, high


def study(seeds: int = 30, spec: TreeSpec = TreeSpec()) -> list[ArmSummary]:  # noqa: B008 - frozen
    """Every arm on trees 0 .. seeds-1."""
    out = []
    greedy: list[float] = []
    for arm in ARMS:
        runs = [search(arm, s, spec) for s in range(seeds)]
        picked, regret = [r.picked for r in runs], [r.regret for r in runs]
        greedy = greedy or picked
        diff = [a - b for a, b in zip(picked, greedy, strict=True)]
        out.append(ArmSummary(arm, statistics.fmean(picked), _ci(picked, 1), statistics.fmean(regret),
                              _ci(regret, 2), statistics.fmean(r.nodes for r in runs), statistics.fmean(diff),
                              _ci(diff, 3)))
    return out


def table(rows: Sequence[ArmSummary], seeds: int, spec: TreeSpec) -> str:
    lines = [f"HGM synthetic tree: {seeds} seeds, {spec.budget} evaluations, root p {spec.p0}",
             f"{'arm':<12}{'picked true p':>15}{'95% CI':>18}{'regret':>9}{'95% CI':>18}{'nodes':>7}"
             f"{'vs greedy (paired)':>20}{'95% CI':>18}"]
    for r in rows:
        lines.append(f"{r.arm:<12}{r.picked_mean:>15.3f}{f'[{r.picked_ci[0]:.3f}, {r.picked_ci[1]:.3f}]':>18}"
                     f"{r.regret_mean:>9.3f}{f'[{r.regret_ci[0]:.3f}, {r.regret_ci[1]:.3f}]':>18}"
                     f"{r.nodes_mean:>7.1f}{r.vs_greedy:>+20.3f}"
                     f"{f'[{r.vs_greedy_ci[0]:+.3f}, {r.vs_greedy_ci[1]:+.3f}]':>18}")
    return "\n".join(lines)
