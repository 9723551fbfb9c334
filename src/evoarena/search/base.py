"""The two shapes of a search policy: pick a parent from an archive, and keep or discard a child from scores."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from evoarena.search.archive import Scored


class ParentPolicy(Protocol):
    """Picks the candidate to mutate next. Every random draw comes from `rng` (the cell's seeded stream), so a
    run is reproducible; a policy that needs no randomness must not draw."""

    def select(self, archive: Sequence[Scored], rng: random.Random) -> Scored: ...


@dataclass(frozen=True)
class Verdict:
    """A gate's decision, with the two aggregates it compared."""

    accepted: bool
    before: float
    after: float


class Gate(Protocol):
    """Keeps or discards a child from the scores before (parent, frontier) and after (child)."""

    def decide(self, before: Sequence[float], after: Sequence[float]) -> Verdict: ...
