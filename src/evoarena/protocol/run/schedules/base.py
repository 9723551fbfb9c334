"""What a schedule is: a policy that yields the units a cell runs, each decided from the results of the ones before.

A schedule splits a cell into lanes: generators that yield `Unit`s (and progress marks) and receive each unit's
result back — the stored one when the unit was finished before (a resumed run), None when it was skipped because
the budget ran out. The cell loop (`protocol/run/cell.py`) drives the lanes and the unit runner executes each unit,
so a schedule only decides what comes next; it never touches the store, the method or a model.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeVar

from evoarena.api import Task, TaskView
from evoarena.api.params import Params as BaseParams
from evoarena.api.schedule import Schedule
from evoarena.protocol.run.schedules.results import UnitResult
from evoarena.protocol.splits import PracticeSplits
from evoarena.spec import ProtocolSpec
from evoarena.store.selection import Selection


class UnitKind(enum.Enum):
    """What a unit does; the unit runner has one handler per kind."""

    INIT = "init"  # the method writes the initial harness
    PRACTICE = "practice"  # one practice step: the method practises on a task and may write a new version
    CHECKPOINT = "checkpoint"  # a checkpoint's validation: a version graded on the val split
    TEST = "test"  # the selected version graded on the locked test split
    STAGE_TEST = "stage test"  # a curriculum stage's test task, graded with the harness as it stands


class Charge(enum.Enum):
    """Which meter a unit charges."""

    BUDGET = "budget"  # the lane's budget meter, enforced (a practice step)
    SELECTION = "selection"  # the lane's budget meter, counted but not enforced: a started checkpoint finishes
    OUTSIDE = "outside"  # outside the budget: the cell's tally of test calls (and the initial harness)


@dataclass(frozen=True)
class Visibility:
    """The task views a method may use in a practice step, standing in for the cell's train and val splits."""

    train: tuple[TaskView, ...]
    val: tuple[TaskView, ...]


@dataclass(frozen=True)
class Unit:
    """One unit of a cell's work: done whole, committed with its attempts, and skipped when a resumed run finds it.

    `version` is the harness version it starts from (practice) or grades (the others; "" for `init`). `tasks` are
    the tasks it practises on or grades; `test_ids` the locked test tasks it grades (empty: the whole test split)."""

    key: str
    kind: UnitKind
    version: str
    tasks: tuple[Task, ...] = ()
    test_ids: tuple[str, ...] = ()
    step: int = 0  # the practice step's number, as the method sees it (`ctx.step`)
    visible: Visibility | None = None  # None: the cell's own train and val splits
    attempt_limit: int | None = None  # submitted attempts the step may make (None: no limit of its own)
    first_attempt: int = 1  # the number its first attempt is graded as (a stage's later attempts)
    meter: Charge = Charge.BUDGET
    checkpoint: bool = False  # a practice step whose resulting version is a checkpoint
    optional: bool = False  # skipped (None sent back) when the budget is spent before it starts


@dataclass(frozen=True)
class Phase:
    """The cell enters a phase of its progress display; `extra` tasks beyond those planned."""

    name: str
    extra: int = 0


@dataclass(frozen=True)
class Tick:
    """One task of the progress display done, with its score (None: not graded)."""

    score: float | None


@dataclass(frozen=True)
class Outcome:
    """Where a lane (or the cell) ended: the last version practice reached and the version selected for test
    (None where nothing is selected, as in a curriculum), with why it was selected."""

    current: str
    selected: str | None
    selection: Selection | None = None


#: A lane: yields units and marks, receives each unit's result (None after a mark or a skipped unit).
Lane = Generator[Unit | Phase | Tick, UnitResult | None, Outcome]


@dataclass(frozen=True)
class CellInputs:
    """What a schedule decides from: the cell, its seed, its practice splits, the protocol and benchmark params."""

    cell: str
    seed: int
    practice: PracticeSplits
    protocol: ProtocolSpec
    benchmark_params: BaseParams  # the benchmark's validated Params (a schedule reads the fields it names)
    test_size: int  # tasks in the locked test split


class CellSchedule(ABC):
    """The policy of one schedule: its lanes and how their ends make the cell's outcome."""

    phase: ClassVar[str]
    """The progress phase the cell opens with."""
    independent: ClassVar[bool] = False
    """Whether lanes share nothing but the initial version, so each may keep a meter and a workspace of its own and
    run beside the others."""

    def __init__(self, inputs: CellInputs) -> None:
        self.inputs = inputs

    @abstractmethod
    def total(self) -> int:
        """Tasks the progress display plans for."""

    def phases(self) -> dict[str, int]:
        """Tasks planned per progress phase, in order (what a cell's ETA counts down)."""
        return {self.phase: self.total()}

    @abstractmethod
    def lanes(self, initial: str) -> list[Lane]:
        """The cell's lanes, each starting from the initial version."""

    def outcome(self, initial: str, ends: Sequence[Outcome]) -> Outcome:
        """The cell's outcome from its lanes' (the last lane's by default)."""
        return ends[-1] if ends else Outcome(initial, None)

    @classmethod
    def reserve(cls, practice: PracticeSplits, protocol: ProtocolSpec) -> int:
        """Model calls a call budget holds back from practice for what the schedule must grade afterwards."""
        return 0

    def first_key(self) -> str | None:
        """The first practice unit's key (an independent schedule's resume check), None if it has none."""
        return None


S = TypeVar("S", bound=type[CellSchedule])
_REGISTRY: dict[type[Schedule], type[CellSchedule]] = {}


def runs(name: type[Schedule]) -> Callable[[S], S]:
    """Register the decorated class as the schedule that runs benchmarks naming `name`."""

    def register(cls: S) -> S:
        _REGISTRY[name] = cls
        return cls

    return register


def schedule_for(name: type[Schedule]) -> type[CellSchedule]:
    """The schedule registered for a benchmark's `schedule` (the nearest registered class it derives from)."""
    for cls in name.__mro__:
        if cls in _REGISTRY:
            return _REGISTRY[cls]
    raise TypeError(f"no schedule runs {name.__qualname__}; known: {', '.join(s.name for s in _REGISTRY)}")
