"""A bounded top-k frontier (EvoSkill, as released): admit while there is room, else evict the worst member iff
the child is strictly better; otherwise discard. Not "only if better than the parent"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Admission:
    """Whether the child joins, and the index of the member it replaces (None: appended, or discarded)."""

    admitted: bool
    evicted: int | None = None


@dataclass(frozen=True)
class BoundedFrontier:
    """At most `size` members; the worst is the lowest score, the latest among ties."""

    size: int

    def admit(self, scores: Sequence[float], child: float) -> Admission:
        """The decision for a child scoring `child` against members scoring `scores` (in frontier order)."""
        if len(scores) < self.size:
            return Admission(True)
        worst = min(range(len(scores)), key=lambda i: (scores[i], -i))
        if child > scores[worst]:
            return Admission(True, worst)
        return Admission(False)
