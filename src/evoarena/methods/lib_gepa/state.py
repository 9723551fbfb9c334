"""What `gepa.optimize` leaves in the harness: `system.md` (the library's best candidate) and its result record."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from evoarena.harness.state import Absent, parse_state

COMPONENT = "system_prompt"
"""The candidate's one component, named as the library's examples name the DefaultAdapter's system prompt."""
RESULT = "memory/gepa.optimize/result.json"


class CandidateRecord(BaseModel):
    """One candidate of the library's pool: its index, parents, text and val scores (by the library's val ids)."""

    index: int
    parents: list[int]
    text: str
    val_mean: float
    val_scores: dict[str, float]


class OptimizeResult(BaseModel):
    """The library's run as the harness keeps it: every candidate, the best, what was accepted and why it stopped.
    `val_ids` maps the library's val ids (positions) to task ids."""

    library_version: str
    seed: int
    candidates: list[CandidateRecord]
    best_idx: int
    accepted: int
    rejected: int
    proposals: int
    total_metric_calls: Absent[int] = None
    val_ids: list[str]
    stopped_by: Absent[str] = None


def read_result(tree: Mapping[str, str]) -> OptimizeResult | None:
    text = tree.get(RESULT)
    return None if text is None else parse_state(RESULT, text, OptimizeResult)
