"""What a finished unit leaves: one record per unit kind, stored as JSON in its `units` row and read back on resume.

`encode` and `decode` are the one codec: the stored object is the record's fields (a field marked `OMIT_NONE` left
out while it is None), so what a resumed run reads is what an earlier run wrote, byte for byte.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from evoarena.store import AttemptRow, RunStore

OMIT_NONE = {"omit_none": True}

Budget = dict[str, Any]  # a BudgetMeter's state: attempts, calls, tokens, exhausted_by


@dataclass(frozen=True)
class InitResult:
    """The initial harness the method wrote."""

    version: str
    budget: Budget


@dataclass(frozen=True)
class StepResult:
    """A practice step: the version it left (the one it started from if the method changed nothing or the budget
    stopped it), the meter after it, and whether one of its submitted attempts passed."""

    version: str
    budget: Budget
    status: Literal["ok", "budget"]
    checkpoint: bool
    rejections: int
    passed: bool = False
    budget_scope: Literal["episode"] | None = field(default=None, metadata=OMIT_NONE)
    """"episode" when the step charged an episode's own meter rather than the cell's."""


@dataclass(frozen=True)
class CheckpointResult:
    """A checkpoint's mean score on val and the meter after grading it."""

    mean: float
    budget: Budget


@dataclass(frozen=True)
class FinalTestResult:
    """The selected version's mean score on the test split."""

    mean: float


@dataclass(frozen=True)
class StageTestResult:
    """A curriculum stage's test score and the benchmark's diagnostics of the answer and the state behind it."""

    score: float | None
    diagnostics: dict[str, Any] | None


UnitResult = InitResult | StepResult | CheckpointResult | FinalTestResult | StageTestResult
R = TypeVar("R", bound=UnitResult)


def encode(result: UnitResult) -> dict[str, Any]:
    """The JSON object stored for `result`."""
    return {f.name: getattr(result, f.name) for f in dataclasses.fields(result)
            if not (f.metadata.get("omit_none") and getattr(result, f.name) is None)}


def decode(kind: type[R], data: dict[str, Any]) -> R:
    """The record of type `kind` stored as `data` (fields it lacks take their defaults)."""
    return kind(**{f.name: data[f.name] for f in dataclasses.fields(kind) if f.name in data})


def read(store: RunStore, cell: str, key: str, kind: type[R]) -> R | None:
    """The result of a unit finished before, or None."""
    data = store.unit_result(cell, key)
    return None if data is None else decode(kind, data)


def commit(store: RunStore, cell: str, key: str, result: UnitResult, rows: Sequence[AttemptRow]) -> None:
    """Record a finished unit: its result and its attempts, in one transaction."""
    store.finish_unit(cell, key, encode(result), rows)
