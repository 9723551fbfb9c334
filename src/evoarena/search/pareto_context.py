"""Meta-Harness's frontier (Lee et al., 2026): the Pareto frontier of score against context size (the classification
runs measure accuracy against context characters). The method builds on the member its proposer names from it (as
released; docs/methods/meta_harness.md); `ContextParetoSampler` draws one uniformly, a policy for other searches that
neither source states. `Scored` carries no size, so sizes come in a separate {id: size} mapping."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evoarena.search.archive import Scored


def dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """(score, size) `a` dominates `b`: no lower score, no larger size, and strictly better in one of the two."""
    return a[0] >= b[0] and a[1] <= b[1] and a != b


def context_frontier(archive: Sequence[Scored], sizes: Mapping[str, float]) -> list[Scored]:
    """The members no other member dominates (score = mean, maximised; size = `sizes[id]`, minimised), in archive
    order. Members with the same score and the same size are one point: only the earliest is kept. A member with
    no size is an error (KeyError), not a free candidate."""
    missing = [c.id for c in archive if c.id not in sizes]
    if missing:
        raise KeyError(f"no context size for {missing}")
    points = [(c.mean, float(sizes[c.id])) for c in archive]
    out: list[Scored] = []
    for i, (cand, p) in enumerate(zip(archive, points, strict=True)):
        if p in points[:i] or any(dominates(q, p) for q in points):
            continue
        out.append(cand)
    return out


@dataclass(frozen=True)
class ContextParetoSampler:
    """A parent drawn uniformly (`rng.choice`) from `context_frontier` of the archive with the given sizes."""

    sizes: Mapping[str, float]

    def select(self, archive: Sequence[Scored], rng: random.Random) -> Scored:
        front = context_frontier(archive, self.sizes)
        if not front:
            raise ValueError("ContextParetoSampler: empty archive")
        return rng.choice(front)
