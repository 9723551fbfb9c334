"""One solver attempt, as a method receives it from `ctx.solve` or `ctx.rollout`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from evoarena.models import Message


@dataclass(frozen=True)
class Attempt:
    """A solver's attempt. `error` is a provider error (not a task failure); `parse_error` is the model's.
    `call_id` is the ledger row of the call that produced it (None when no call was made)."""

    task_id: str
    text: str
    answer: str | None
    parse_error: str | None = None
    error: str | None = None
    messages: tuple[Message, ...] = ()
    number: int = 1  # attempt number within the stage (curriculum practice); 1 elsewhere
    call_id: int | None = None
    tree_after: Mapping[str, str] | None = None  # an episode agent's edited harness (None: no in-episode edit)
