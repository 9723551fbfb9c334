"""The dependency-free fallback: cosine of the two lowercase word sets."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from evoarena.retrieval.base import Hit, top_k

_WORD = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> frozenset[str]:
    """The set of lowercase `[a-z0-9]+` words in `text`."""
    return frozenset(_WORD.findall(text.lower()))


def similarity(a: str, b: str) -> float:
    """Cosine similarity of the two lowercase word sets (|A∩B| / sqrt(|A|·|B|)); 0 when either is empty."""
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / math.sqrt(len(ta) * len(tb))


class LexicalRetriever:
    """Deterministic, needs no model; sees shared words only, not meaning."""

    name = "lexical-token-set-cosine"

    def scores(self, query: str, candidates: Sequence[str], *, instruction: str | None = None) -> list[float]:
        # an instruction is ignored: its words would count as overlap with every candidate that shares them
        return [similarity(query, c) for c in candidates]

    def rank(self, query: str, candidates: Sequence[str], k: int, *, instruction: str | None = None) -> list[Hit]:
        return top_k(self.scores(query, candidates), k)
