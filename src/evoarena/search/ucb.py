"""EvoTest's UCB over a tree of configurations (He et al., 2025): every node may be evolved again, and the one with
the highest score + c · α^depth · sqrt(ln(max(2, N)) / (1 + children)) is, c = 1 and α = 0.8 by default.

What N is: the seed (000 §8) says only "UCB chooses the next episode's configuration among parent and child
configurations"; the released code (yf-he/EvoTest @f92474c, `calculate_ucb`) takes N = the number of nodes in the
tree, where one node is made per episode, so nodes = configurations evaluated. Here N defaults to the archive size
(the released rule) and may be given explicitly (`total`, e.g. a count of evaluations) when the two differ.
The score is the member's mean; the released code uses the raw episode score (0–350 on Zork 1), so c is relative to
its scale: on raw scores the bonus (≤ ~1.2) barely moves the argmax, on [0, 1] it exceeds the score range. The
`evotest` method passes raw game scores by default (`score_scale`)."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from evoarena.search.archive import Scored
from evoarena.search.lineage import child_counts, depths


def exploration(depth: int, children: int, total: int, c: float = 1.0, alpha: float = 0.8) -> float:
    """c · α^depth · sqrt(ln(max(2, total)) / (1 + children)): the bonus shrinks with depth and with children."""
    return c * alpha**depth * math.sqrt(math.log(max(2, total)) / (1 + children))


def ucb_scores(archive: Sequence[Scored], c: float = 1.0, alpha: float = 0.8, total: int | None = None) -> list[float]:
    """UCB of every member in archive order; N = `total`, or the archive size when None."""
    n = len(archive) if total is None else total
    kids = child_counts(archive)
    deep = depths(archive)
    return [m.mean + exploration(deep[m.id], kids[m.id], n, c, alpha) for m in archive]


@dataclass(frozen=True)
class EvoTestUCB:
    """The member with the highest `ucb_scores`, the earliest among ties; no random draw."""

    c: float = 1.0
    alpha: float = 0.8
    total: int | None = None

    def select(self, archive: Sequence[Scored], rng: random.Random) -> Scored:
        return self.select_among(archive, archive, rng)

    def select_among(self, archive: Sequence[Scored], eligible: Sequence[Scored], rng: random.Random) -> Scored:
        """The member of `eligible` with the highest UCB, its depth, children and N taken in the whole `archive`."""
        if not eligible:
            raise ValueError("EvoTestUCB: nothing eligible")
        ucb = dict(zip((c.id for c in archive), ucb_scores(archive, self.c, self.alpha, self.total), strict=True))
        return max(eligible, key=lambda c: ucb[c.id])
