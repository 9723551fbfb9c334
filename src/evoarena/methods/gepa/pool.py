"""GEPA's state: the pool of accepted candidates (`memory/gepa/pool.json`) and its view as a search archive."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from evoarena.harness.state import Absent, parse_state
from evoarena.methods.gepa.merge import MergeState
from evoarena.search import Scored

POOL = "memory/gepa/pool.json"


class Candidate(BaseModel):
    """One accepted candidate: its component texts, its score per val task id met so far, and which component its
    next mutation edits (round robin). A merged candidate has a second parent, `merge_parent`."""

    id: str
    parent: str | None
    components: dict[str, str]
    scores: dict[str, float]
    next_component: int = 0
    merge_parent: Absent[str] = None


class Pool(BaseModel):
    """GEPA's state: every accepted candidate, in order of acceptance (`c0` is the seed), and the merge proposer's
    counters once merge is on."""

    candidates: list[Candidate]
    merge: Absent[MergeState] = None


def read_pool(tree: Mapping[str, str]) -> Pool | None:
    text = tree.get(POOL)
    return None if text is None else parse_state(POOL, text, Pool)


def aligned(candidates: Sequence[Candidate], ids: Sequence[str]) -> tuple[Scored, ...]:
    """The pool as a search archive: every candidate with its scores on `ids`, in order, in pool order."""
    return tuple(Scored(c.id, tuple(c.scores[i] for i in ids), c.parent) for c in candidates)
