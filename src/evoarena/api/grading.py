"""What a benchmark's grader may call: a model the protocol lends it for a grading role (an LLM judge)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from evoarena.models.base import Completion, GenParams, Message

GRADING_PHASE = "grading"
"""The ledger phase of every call a grader makes."""


class GradingModel(Protocol):
    """A grading role's model, as `Benchmark.bind_grader` receives it: every call is recorded in the ledger (phase
    "grading") and cached like any other, and counts against no method's budget. Methods never hold one."""

    role: str
    default_params: GenParams

    def complete(
        self, messages: Sequence[Message], params: GenParams | None = None, *, sample_index: int = 0
    ) -> Completion: ...
