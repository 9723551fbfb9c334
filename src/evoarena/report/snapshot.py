"""RunSnapshot: what the report reads of a run's store once per rebuild — the run row, its spec read back as an
ExperimentSpec, its cells and the runner's events the report shows — so every section computes from the same reading
instead of asking the store again."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from pydantic import ValidationError

from evoarena.spec import ExperimentSpec
from evoarena.store import RunStore, queries
from evoarena.store.queries import CellRow, EventRow, RunRow
from evoarena.store.run_events import MethodIsolation, ProbesRan, RunStarted, last_event, read_events


@dataclass(frozen=True)
class RunSnapshot:
    """One reading of a run: its row, spec, cells (by cell name), the runner events the report uses and the methods'
    rejected outputs."""

    run: RunRow
    spec: ExperimentSpec
    cells: tuple[CellRow, ...]
    started: RunStarted | None
    probes: ProbesRan | None
    isolation: tuple[MethodIsolation, ...]
    rejections: tuple[EventRow, ...]

    @classmethod
    def load(cls, store: RunStore) -> RunSnapshot:
        """Read the run once. FileNotFoundError for a store without a run; ValueError when its stored spec is no
        ExperimentSpec (a store written by other code)."""
        run = queries.run(store)
        if run is None:
            raise FileNotFoundError(f"{store.run_dir}: the store holds no run")
        try:
            spec = ExperimentSpec.model_validate_json(run.spec_json)
        except ValidationError as err:
            raise ValueError(f"{store.run_dir}: the stored spec is no experiment spec ({err.error_count()} errors: "
                             f"{err.errors()[0]['loc']}: {err.errors()[0]['msg']})") from None
        isolated = spec.protocol.isolation != "in-process"
        return cls(run=run, spec=spec, cells=tuple(queries.cells(store)), started=last_event(store, RunStarted),
                   probes=last_event(store, ProbesRan),
                   isolation=tuple(read_events(store, MethodIsolation)) if isolated else (),
                   rejections=tuple(queries.events(store, ["rejected_output"])))

    @property
    def rejected_outputs(self) -> int:
        """How many model outputs the methods rejected (`rejected_output` events)."""
        return len(self.rejections)

    @cached_property
    def by_cell(self) -> Mapping[str, CellRow]:
        return {c.cell: c for c in self.cells}

    @property
    def conditions(self) -> list[str]:
        """The spec's conditions (a method's label, else its name), in spec order."""
        return [m.condition for m in self.spec.methods]

    @property
    def references(self) -> list[str]:
        """The conditions that install a reference harness (the headroom's), as the run recorded them at its start."""
        return list(self.started.references or []) if self.started is not None else []

    def cell_order(self) -> dict[str, int]:
        """Each cell's place in the spec (seeds outer, methods inner): the order a sequential run makes them in."""
        conditions = self.conditions
        place = {(seed, cond): i * len(conditions) + j for i, seed in enumerate(self.spec.seeds)
                 for j, cond in enumerate(conditions)}
        return {c.cell: place.get((c.seed, c.condition), len(place)) for c in self.cells}
