"""What a task is, as the protocol, a benchmark and a method see it: records with no behaviour."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

Split = Literal["train", "val", "test"]


class TestSplitLocked(PermissionError):
    """Raised when anything but the evaluator reaches for the test split."""

    __test__ = False  # not a pytest class


@dataclass(frozen=True)
class TaskView:
    """What a method and the solver may see of a task."""

    id: str
    split: Split
    source_id: str
    prompt: str


@dataclass(frozen=True)
class Task:
    """A task with its hidden reference; only the runner and grader hold these."""

    id: str
    split: Split
    source_id: str
    prompt: str
    reference: str
    meta: dict[str, Any] = field(default_factory=dict)

    def view(self) -> TaskView:
        return TaskView(self.id, self.split, self.source_id, self.prompt)

    def payload_hash(self) -> str:
        return self._payload_hash

    @cached_property
    def _payload_hash(self) -> str:
        """Computed once per task (the split's hash and the run's task rows both need it)."""
        blob = json.dumps([self.id, self.split, self.source_id, self.prompt, self.reference], ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Parsed:
    """A parsed solver output: `answer` is None when the output could not be parsed."""

    answer: str | None
    error: str | None = None


@dataclass(frozen=True)
class Feedback:
    """A grader's verdict and the message methods see. `error` says the answer could not be graded (an LLM judge's
    unreadable reply): the protocol then records the attempt as an error, excluded from accuracy, not as a 0."""

    score: float
    passed: bool
    message: str
    error: str | None = None
