"""The retriever interface: score candidate texts against a query and keep the best k."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol


class Hit(NamedTuple):
    """One retrieved candidate: its position in the candidate list and its similarity to the query."""

    position: int
    score: float


class Retriever(Protocol):
    """Ranks candidate texts by similarity to a query. `name` is what runs record, so results stay apart."""

    name: str

    def scores(self, query: str, candidates: Sequence[str], *, instruction: str | None = None) -> list[float]:
        """One similarity per candidate, in candidate order. `instruction` describes the retrieval task for
        retrievers that embed it with the query; others ignore it."""
        ...

    def rank(self, query: str, candidates: Sequence[str], k: int, *, instruction: str | None = None) -> list[Hit]:
        """The `k` best candidates, best first (see `top_k`)."""
        ...


def top_k(scores: Sequence[float], k: int) -> list[Hit]:
    """The `k` highest scores, best first; ties go to the earlier candidate. No threshold."""
    ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return [Hit(i, float(scores[i])) for i in ranked[: max(k, 0)]]
