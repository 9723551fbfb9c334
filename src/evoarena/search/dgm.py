"""The Darwin Gödel Machine's parent sampling, as the HGM and EvoTest seeds describe it: every archive member is
a possible parent, weighted by a sigmoid of its score (good agents preferred) divided by one plus its number of
children (agents already expanded often are tried less), and one parent is drawn in proportion to the weights."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from evoarena.search.archive import Scored
from evoarena.search.lineage import child_counts


def sigmoid(x: float) -> float:
    """1 / (1 + e^−x), computed without overflow for large |x|."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def dgm_weight(score: float, children: int, steepness: float = 10.0, midpoint: float = 0.5) -> float:
    """sigmoid(steepness · (score − midpoint)) / (1 + children); DGM's defaults are 10 and 0.5."""
    return sigmoid(steepness * (score - midpoint)) / (1 + children)


def dgm_weights(archive: Sequence[Scored], steepness: float = 10.0, midpoint: float = 0.5) -> list[float]:
    """The unnormalised weight of every member, in archive order (score = the member's mean)."""
    kids = child_counts(archive)
    return [dgm_weight(c.mean, kids[c.id], steepness, midpoint) for c in archive]


@dataclass(frozen=True)
class DGMParent:
    """One `rng.choices` draw over the whole archive (archive order) with `dgm_weights`."""

    steepness: float = 10.0
    midpoint: float = 0.5

    def select(self, archive: Sequence[Scored], rng: random.Random) -> Scored:
        return self.select_among(archive, archive, rng)

    def select_among(self, archive: Sequence[Scored], eligible: Sequence[Scored], rng: random.Random) -> Scored:
        """One draw among `eligible`, each weighted as in the whole `archive` (its children counted there)."""
        if not eligible:
            raise ValueError("DGMParent: nothing eligible")
        weight = dict(zip((c.id for c in archive), dgm_weights(archive, self.steepness, self.midpoint), strict=True))
        return rng.choices(eligible, weights=[weight[c.id] for c in eligible])[0]
