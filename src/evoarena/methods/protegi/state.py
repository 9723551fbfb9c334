"""ProTeGi's state (`memory/protegi/state.json`): every candidate prompt proposed so far, the beam, the round."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from evoarena.harness.state import Absent
from evoarena.methods.protegi.label_check import LabelCheck

STATE = "memory/protegi/state.json"
Kind = Literal["seed", "rewrite", "paraphrase"]


class Candidate(BaseModel):
    """One candidate prompt: its id (`p0` is the initial system prompt), the candidate it came from, how it was
    made (a rewrite from a critique, or a paraphrase), the round that made it, its text, the critique it answers
    and what the label check found against its parent."""

    id: str
    parent: str | None
    kind: Kind
    round: int
    text: str
    critique: Absent[str] = None
    check: Absent[LabelCheck] = None
    capped: Absent[bool] = None
    """Proposed but left out of its round's scoring by the cap on new candidates per beam prompt."""


class State(BaseModel):
    """The search so far: rounds done, the beam's candidate ids (best first), every candidate, and the task's
    labels (the distinct train references the label check reads; empty when the task is not a classification)."""

    round: int = 0
    beam: list[str]
    candidates: list[Candidate]
    labels: list[str] = []

    def by_id(self, cid: str) -> Candidate:
        return next(c for c in self.candidates if c.id == cid)

    def new_id(self) -> str:
        return f"p{len(self.candidates)}"
