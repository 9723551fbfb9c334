"""The record of one graded attempt as the runner commits it with its unit."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AttemptRow:
    """One attempt of a unit: what was answered, how it scored, and where its text and its call are kept.
    `score`/`passed` are None for a provider error (never scored); `text` goes to the blob store."""

    phase: str  # "practice" | "rollout" | "select" | "test"
    task_id: str
    version_id: str
    answer: str | None = None
    score: float | None = None
    passed: bool | None = None
    error: str | None = None
    parse_error: str | None = None
    text: str = ""
    call_id: int | None = None
