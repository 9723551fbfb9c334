"""Typed payloads of the runner's events that code reads back (the report, the viewer): written and read through
one pair, `write_event` and `read_events`, so writer and reader agree on the fields.

Reading is lenient (unknown keys ignored, missing ones defaulted) so that a store written by older code still reads.
The other event kinds — a method's own, and the runner's that no code reads back — keep plain mapping payloads.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from . import queries
from .db import RunStore


class RunEvent(BaseModel):
    """A runner event's payload; `KIND` is the event kind it is stored under."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    KIND: ClassVar[str]


def _absent(value: object) -> bool:
    return value is None


class RunStarted(RunEvent):
    """The run started or resumed: the spec's hash, the benchmark's facts (`Benchmark.info`) and, when a condition
    runs a library's optimiser, that library and version by condition (`{"gepa-lib": "gepa 0.1.4"}`), and the
    conditions that run a reference harness."""

    KIND = "run_started"
    resumed: bool = False
    spec_hash: str = ""
    benchmark: dict[str, Any] | None = None
    libraries: dict[str, str] | None = Field(default=None, exclude_if=_absent)
    # the conditions whose method installs a known harness unchanged (`Method.reference_harness`): the headroom's
    references: list[str] | None = Field(default=None, exclude_if=_absent)


class RunFinished(RunEvent):
    KIND = "run_finished"
    cells: int = 0


class RunInterrupted(RunEvent):
    KIND = "run_interrupted"
    error: str = ""


class ProbesRan(RunEvent):
    """The role probes ran before the cells: the usable-share threshold, how many summaries and warnings."""

    KIND = "probes"
    threshold: float | None = None
    summaries: int = 0
    warnings: int = 0


class MethodIsolation(RunEvent):
    """How one cell's method process was confined: the level asked for, the level got, the promises at it."""

    KIND = "method_isolation"
    asked: str | None = None
    level: str | None = None
    holds: list[str] = Field(default_factory=list)
    lacks: list[str] = Field(default_factory=list)


class FinalUnscored(RunEvent):
    """A cell's final version went ungraded on val (the budget could not pay for it), so an earlier one was tested:
    the two versions and the line the summary and the report show."""

    KIND = "final_unscored"
    final: str = ""
    selected: str = ""
    warning: str = ""


TYPED_KINDS: frozenset[str] = frozenset(cls.KIND for cls in RunEvent.__subclasses__())
"""Every typed runner event's kind: the runner's own, so a method may not log under one of them."""

E = TypeVar("E", bound=RunEvent)


def write_event(store: RunStore, event: RunEvent, cell: str | None = None) -> None:
    """Store a runner event under its kind."""
    store.event(event.KIND, event.model_dump(), cell=cell)


def read_events(store: RunStore, kind: type[E]) -> list[E]:
    """Every event of this kind the runner wrote (none a method logged), in the order they happened."""
    return [kind.model_validate(e.payload) for e in queries.events(store, [kind.KIND], runner_only=True)]


def last_event(store: RunStore, kind: type[E]) -> E | None:
    """The latest event of this kind the runner wrote (e.g. the `run_started` of the last resume)."""
    found = queries.last_event(store, kind.KIND, runner_only=True)
    return None if found is None else kind.model_validate(found.payload)
