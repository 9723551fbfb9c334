"""How ProTeGi spends its evaluation budget among a round's candidates (the released `UCBBandits` and
`UCBBanditEvaluator` of `prompt_optimization/evaluators.py`): `rounds` evaluation rounds, each choosing
`per_round` candidates and scoring every chosen one on the same fresh sample of train tasks. `ucb` chooses by mean
score plus `c·sqrt(ln t / (n + 0.001))`, t the evaluation round (0-based, as released: round 0 has nothing counted
and draws at random, round 1 has ln 1 = 0 and is greedy); `uniform` (the paper's Table 2 arm) chooses in turn, so
every candidate gets the same share of the same budget. A candidate never chosen scores 0, as released."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

Allocation = Literal["ucb", "uniform"]
EPS = 1e-3
"""Added to every count in the UCB bonus (the release's `self.counts + 1e-3`)."""


@dataclass
class Arms:
    """Per candidate: the queries it was scored on so far and the sum of its scores over them."""

    counts: list[float]
    totals: list[float]

    @classmethod
    def empty(cls, k: int) -> Arms:
        return cls([0.0] * k, [0.0] * k)

    def means(self) -> list[float]:
        """Mean score per query; 0 for a candidate never chosen (the release's `get_scores`)."""
        return [t / n if n else 0.0 for t, n in zip(self.totals, self.counts, strict=True)]

    def update(self, chosen: Sequence[int], scores: Sequence[float], samples: int) -> None:
        for i, s in zip(chosen, scores, strict=True):
            self.counts[i] += samples
            self.totals[i] += s * samples


def choose_ucb(arms: Arms, n: int, t: int, c: float, rng: random.Random) -> list[int]:
    """The `n` candidates of highest UCB score (ties: the earlier candidate); at random while nothing is counted."""
    k = len(arms.counts)
    if not sum(arms.counts):
        return rng.sample(range(k), n)
    means = arms.means()
    ucb = [m + c * math.sqrt(math.log(t) / (cnt + EPS)) for m, cnt in zip(means, arms.counts, strict=True)]
    return sorted(range(k), key=lambda i: (-ucb[i], i))[:n]


def choose_uniform(k: int, n: int, t: int) -> list[int]:
    """`n` candidates in turn, continuing where round `t - 1` stopped (all of them when `n >= k`)."""
    return [(t * n + j) % k for j in range(n)]


@dataclass
class Allocated:
    """What the evaluation spent: every candidate's arm counts and totals, and per round the candidates chosen and
    their sample scores."""

    arms: Arms
    log: list[dict[str, object]] = field(default_factory=list)


def allocate(k: int, rounds: int, per_round: int, samples: int, allocation: Allocation, c: float,
             rng: random.Random, evaluate: Callable[[list[int]], list[float]]) -> Allocated:
    """Run the evaluation rounds: `evaluate(chosen)` scores the chosen candidates (their mean on one fresh sample of
    `samples` train tasks, drawn by the caller)."""
    per_round = min(per_round, k)
    out = Allocated(Arms.empty(k))
    for t in range(rounds):
        ucb = allocation == "ucb"
        chosen = choose_ucb(out.arms, per_round, t, c, rng) if ucb else choose_uniform(k, per_round, t)
        scores = evaluate(chosen)
        out.arms.update(chosen, scores, samples)
        out.log.append({"round": t, "chosen": chosen, "scores": scores})
    return out
