"""One cell of an experiment (condition × model × seed), run as its benchmark's schedule says.

The schedule (`schedules/`) yields the cell's units lane by lane, each decided from the results of the ones before;
this loop drives the lanes and hands each unit to the unit runner (`units.py`), which does it and commits it, or reads
it back when a resumed run finds it finished. Lanes of an independent schedule (a curriculum's episodes) keep meters
of their own in a cell without budget limits and run side by side under a concurrent scheduler.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evoarena.harness import HarnessWorkspace
from evoarena.protocol.budget import BudgetMeter
from evoarena.protocol.progress import Tracker
from evoarena.protocol.run.schedules import CellInputs, Lane, Outcome, schedule_for
from evoarena.protocol.run.schedules.base import Phase, Unit
from evoarena.protocol.run.schedules.results import StepResult, UnitResult, read
from evoarena.protocol.run.units import ProviderUnavailable, UnitRunner
from evoarena.spec import ExperimentSpec, MethodSpec
from evoarena.store import queries
from evoarena.store.run_events import FinalUnscored, write_event
from evoarena.store.selection import selection_json

__all__ = ["CellPlan", "CellRunner", "ProviderUnavailable"]


@dataclass(frozen=True)
class CellPlan:
    cell: str
    condition: str
    method: MethodSpec
    model: str  # the solver's model name
    seed: int


class CellRunner:
    """Runs (or resumes) one cell: its initial harness, then its schedule's lanes; returns the version it selected
    for test (the last version where its schedule selects none)."""

    def __init__(self, plan: CellPlan, units: UnitRunner) -> None:
        """`units`: the runner of this cell's units (its models, method, store and splits), built by the caller."""
        self.plan, self.units = plan, units
        self.spec, self.store = units.spec, units.store
        inputs = CellInputs(plan.cell, plan.seed, units.practice_splits, units.spec.protocol, units.benchmark.params,
                            units.evaluator.size)
        schedule = schedule_for(type(units.benchmark).schedule)
        self.schedule = schedule(inputs)
        units.meter.reserve_calls = schedule.reserve(units.practice_splits, units.spec.protocol)

    def run(self) -> str:
        plan, units = self.plan, self.units
        finished_before = any(c.cell == plan.cell and c.status == "done" for c in queries.cells(self.store))
        self.store.upsert_cell(plan.cell, condition=plan.condition, method=units.method.name, model=plan.model,
                               seed=plan.seed, status="running")
        initial = units.initial()
        units.tracker = Tracker(plan.cell, self.schedule.total(), units.report, units.spent,
                                phases=self.schedule.phases(), max_calls=self.spec.budget.max_calls,
                                pending=units.in_flight)
        units.tracker.phase(self.schedule.phase)
        lanes = self.schedule.lanes(initial)
        if self._own_meters():
            # lanes side by side, each from the initial version with a meter and a workspace of its own; the cell's
            # spending is their sum (a meter with limits would make one lane's refusal depend on another's timing,
            # so a budgeted cell runs its lanes in order, on one meter)
            meters = [BudgetMeter(self.spec.budget) for _ in lanes]
            units.live_meters = meters
            parallel = units.scheduler.concurrent and len(lanes) > 1
            spaces = [units.lane_ws(k) if parallel else units.ws for k in range(len(lanes))]
            ends = units.scheduler.map(lambda k: self._drive(lanes[k], meters[k], spaces[k]), range(len(lanes)))
            units.live_meters = []
            units.meter.restore(_summed(meters))
        else:
            ends = [self._drive(lane, units.meter, units.ws) for lane in lanes]
        units.tracker.finish()
        end = self.schedule.outcome(initial, ends)
        selection = end.selection
        self.store.upsert_cell(plan.cell, status="done", current_version=end.current, selected_version=end.selected,
                               budget_json=_budget_json(self.spec, units.meter),
                               selection_json=None if selection is None else selection_json(selection))
        warning = None if selection is None else selection.warning()
        if selection is not None and warning is not None and not finished_before:  # once, not again on a resume
            write_event(self.store, FinalUnscored(final=selection.final_version, selected=selection.selected,
                                                  warning=warning), cell=plan.cell)
        return end.current if end.selected is None else end.selected

    def _drive(self, lane: Lane, meter: BudgetMeter, ws: HarnessWorkspace) -> Outcome:
        """Run one lane to its end: each unit it yields is done on `meter` and in `ws`, and its result sent back."""
        reply: UnitResult | None = None
        while True:
            try:
                item = lane.send(reply)
            except StopIteration as end:
                return end.value
            reply = None
            if isinstance(item, Unit):
                reply = self.units.run(item, meter, ws)
            elif isinstance(item, Phase):
                self.units.tracker.phase(item.name, extra=item.extra)
            else:
                self.units.tracker.task(item.score)

    def _own_meters(self) -> bool:
        """Whether lanes keep meters of their own: an independent schedule in a cell with no budget limit,
        in-process (a method in its own process serves one step at a time), and no practice unit written before
        lanes did (a run resumed from older code keeps counting on one meter)."""
        b = self.spec.budget
        if not self.schedule.independent or self.spec.protocol.isolation != "in-process":
            return False
        if b.max_attempts is not None or b.max_calls is not None or b.max_tokens is not None or b.max_usd is not None:
            return False
        key = self.schedule.first_key()
        first = None if key is None else read(self.store, self.plan.cell, key, StepResult)
        return first is None or first.budget_scope == "episode"


def _summed(meters: Sequence[BudgetMeter]) -> dict[str, Any]:
    """The state of one meter that counted what all of `meters` did."""
    return {"attempts": sum(m.attempts for m in meters), "calls": sum(m.calls for m in meters),
            "tokens": sum(m.tokens for m in meters), "exhausted_by": None,
            **({"usd": sum(m.usd for m in meters)} if any(m.usd for m in meters) else {})}


def _budget_json(spec: ExperimentSpec, meter: BudgetMeter) -> str:
    return json.dumps({"limits": spec.budget.dumped(), "used": meter.state()}, sort_keys=True)
