"""Scored candidates: what every selection policy and acceptance gate reads (ids, per-instance scores, lineage)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


def mean(xs: Sequence[float]) -> float:
    """The arithmetic mean, 0.0 for no values (a candidate with no val instances yet)."""
    return sum(xs) / len(xs) if xs else 0.0


@dataclass(frozen=True)
class Scored:
    """One candidate of an archive: its id, its scores on the archive's instances (the same instances, in the
    same order, for every member) and the id of the candidate it was derived from."""

    id: str
    scores: tuple[float, ...]
    parent: str | None = None

    @property
    def mean(self) -> float:
        return mean(self.scores)


def archive_of(scores: Mapping[str, Sequence[float]]) -> tuple[Scored, ...]:
    """An archive from {id: aligned scores}, in the mapping's order (the order ties are broken by)."""
    return tuple(Scored(i, tuple(s)) for i, s in scores.items())
