"""GEPA's Pareto-frontier parent sampling (Agrawal et al., 2025, as released): per-instance co-best fronts, the
dominated removed, a parent drawn with probability proportional to the number of fronts it is on."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from evoarena.search.archive import Scored


def fronts(archive: Sequence[Scored]) -> list[set[str]]:
    """For every instance, the ids of the candidates with the top score on it."""
    n = len(archive[0].scores) if archive else 0
    out: list[set[str]] = []
    for k in range(n):
        top = max(c.scores[k] for c in archive)
        out.append({c.id for c in archive if c.scores[k] == top})
    return out


def pareto_weights(archive: Sequence[Scored]) -> dict[str, int]:
    """{id: number of fronts it is on} for the candidates that survive domination: a candidate is removed when
    every front it sits on also holds another survivor, lowest mean first (equal means: in order of first
    appearance on a front, instance by instance, as the release lists them), one removal at a time. With no
    instances every candidate gets weight 1."""
    ids = [c.id for c in archive]
    if not archive or not archive[0].scores:
        return {i: 1 for i in ids}
    by_id = {c.id: c for c in archive}
    on = fronts(archive)
    seen = list(dict.fromkeys(i for f in on for i in ids if i in f))
    first = {i: seen.index(i) if i in seen else len(seen) for i in ids}
    alive = set(ids)
    changed = True
    while changed:
        changed = False
        for y in sorted(alive, key=lambda i: (by_id[i].mean, first[i])):
            others = alive - {y}
            mine = [f for f in on if y in f]
            if mine and all(f & others for f in mine):
                alive.remove(y)
                changed = True
                break
    return {i: sum(1 for f in on if i in f) for i in ids if i in alive}


@dataclass(frozen=True)
class ParetoSampler:
    """One `rng.choices` draw over the surviving candidates (archive order), weighted by `pareto_weights`."""

    def select(self, archive: Sequence[Scored], rng: random.Random) -> Scored:
        weights = pareto_weights(archive)
        live = [c for c in archive if weights.get(c.id, 0) > 0]
        return rng.choices(live, weights=[weights[c.id] for c in live])[0]
