"""Greedy selection: the candidate with the highest mean score, the earliest among ties (no random draw)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from evoarena.search.archive import Scored


def best_index(archive: Sequence[Scored]) -> int:
    """Index of the highest mean; ties go to the earliest. The archive must not be empty."""
    best = 0
    for i, cand in enumerate(archive):
        if cand.mean > archive[best].mean:
            best = i
    return best


@dataclass(frozen=True)
class BestMean:
    """Always the best candidate by mean score (EvoSkill's parent; GEPA's and EvoSkill's live harness)."""

    def select(self, archive: Sequence[Scored], rng: random.Random) -> Scored:
        return archive[best_index(archive)]
