"""The unit runner: executes one unit of a cell's work and commits its result with its attempts in one transaction.

A unit finished before is read back instead of redone, so a resumed run replays what was committed; a unit cut off
by a kill is redone from the harness version the schedule hands it (the one the previous unit left), so resumed runs
end identical. Provider failures that outlast their retries stop the unit before anything of it is kept.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from evoarena.api import GRADING_PHASE, Benchmark, Method
from evoarena.harness import (
    HarnessWorkspace,
    Manifest,
    check_version,
    load_tree,
    located,
    save_version,
    store_checked,
    tree_hash,
)
from evoarena.models import CallScope, Meter, RoleModel, attributed
from evoarena.protocol.boundary.channel import serving
from evoarena.protocol.boundary.client import StepContext
from evoarena.protocol.budget import BudgetExhausted, BudgetMeter
from evoarena.protocol.progress import Progress, Tally, Tracker
from evoarena.protocol.run.evaluate import Evaluator, evaluate_tree, mean_score
from evoarena.protocol.run.schedules.base import Charge, Unit, UnitKind
from evoarena.protocol.run.schedules.results import (
    CheckpointResult,
    FinalTestResult,
    InitResult,
    StageTestResult,
    StepResult,
    UnitResult,
    commit,
    read,
)
from evoarena.protocol.run.step_service import Grader, StepService
from evoarena.protocol.scheduler import SERIAL, Scheduler
from evoarena.protocol.splits import PracticeSplits
from evoarena.spec import ExperimentSpec
from evoarena.store import AttemptRow, RunStore
from evoarena.store.calls import errors_since, last_call_id, pending_calls

#: The record each kind of unit leaves.
RESULTS: dict[UnitKind, type[UnitResult]] = {
    UnitKind.INIT: InitResult, UnitKind.PRACTICE: StepResult, UnitKind.CHECKPOINT: CheckpointResult,
    UnitKind.TEST: FinalTestResult, UnitKind.STAGE_TEST: StageTestResult,
}

Done = tuple[UnitResult, Sequence[AttemptRow]]


class ProviderUnavailable(RuntimeError):
    """Model calls failed after all retries; the unit was not kept, so re-running the command resumes it."""


class UnitRunner:
    """One cell's means of doing work — its store, method, models, meters and progress — and the handler of each
    kind of unit."""

    def __init__(
        self,
        cell: str,
        seed: int,
        *,
        update_note: str | None,
        spec: ExperimentSpec,
        store: RunStore,
        benchmark: Benchmark,
        practice: PracticeSplits,
        evaluator: Evaluator,
        models: Mapping[str, RoleModel],
        method: Method,
        progress: Progress | None = None,
        scheduler: Scheduler = SERIAL,
    ) -> None:
        self.cell, self.seed, self.update_note = cell, seed, update_note
        # a budget on calls or tokens is spent call by call, so which call it refuses depends on their order: such a
        # cell keeps its own work in order (it still runs beside other cells)
        b = spec.budget
        counted = b.max_calls is not None or b.max_tokens is not None or b.max_usd is not None
        self.scheduler = SERIAL if counted else scheduler
        self.test_scheduler = scheduler  # the test is outside the budget: it always runs at the run's concurrency
        self.spec = spec
        self.store = store
        self.benchmark = benchmark
        self.practice_splits = practice
        self.evaluator = evaluator
        # a grading role (the benchmark's judge) is the benchmark's alone, unless the method plays one of that name
        hidden = set(type(benchmark).grader_roles(benchmark.params)) - set(method.roles)
        self.base_models = {role: m for role, m in models.items() if role not in hidden}
        self.report = progress
        self.tally = Tally()  # the test phase's calls and tokens (outside the budget)
        self.live_meters: list[BudgetMeter] = []  # besides self.meter: lanes' own, while they run
        self.tracker = Tracker(cell, 0, None, self.spent)
        self.method = method
        self.meter = BudgetMeter(spec.budget)
        self.ws = HarnessWorkspace(store.run_dir / "cells" / cell / "harness", spec.protocol.harness)
        self.grader = Grader({t.id: t for t in practice.train + practice.val}, benchmark.grade)
        self._handlers: dict[UnitKind, Callable[[Unit, BudgetMeter, HarnessWorkspace], Done]] = {
            UnitKind.INIT: self._init, UnitKind.PRACTICE: self._practice, UnitKind.CHECKPOINT: self._checkpoint,
            UnitKind.TEST: self._test, UnitKind.STAGE_TEST: self._stage_test,
        }

    def run(self, unit: Unit, meter: BudgetMeter, ws: HarnessWorkspace) -> UnitResult | None:
        """The unit's result — read back if it was finished before, else done and committed now — or None when it
        is optional and `meter` (its lane's) cannot pay for it: a practice step once the meter is spent, a checkpoint
        when the whole budget (the reserve held back from practice included) has no room for a call per val task.
        A practice step or a checkpoint leaves `meter` as its result recorded; a checkpoint (`Charge.SELECTION`)
        turns the meter's refusals off for the rest of the lane."""
        selecting = unit.meter is Charge.SELECTION
        if selecting:
            meter.enforce = False  # selection spends from the budget but finishes the checkpoint it started
        done = read(self.store, self.cell, unit.key, RESULTS[unit.kind])
        replayed = done is not None
        if done is None:
            if unit.optional and not (meter.can_pay(len(unit.tasks)) if selecting else not meter.exhausted()):
                return None
            done, rows = self._handlers[unit.kind](unit, meter, ws)
            commit(self.store, self.cell, unit.key, done, rows)
        else:
            self._replay(unit, done)
        if isinstance(done, StepResult | CheckpointResult):
            meter.restore(done.budget)
        if isinstance(done, StepResult):
            self.tracker.rejected(done.rejections)
        if replayed:
            self.tracker.resync()  # its calls were read back, not made now: the ETA does not time them
        return done

    def initial(self) -> str:
        """The initial harness version: the method writes it in the cell's workspace (unit `init`)."""
        done = self.run(Unit("init", UnitKind.INIT, "", meter=Charge.OUTSIDE), self.meter, self.ws)
        assert isinstance(done, InitResult)  # an init unit leaves an InitResult
        return done.version

    def lane_ws(self, k: int) -> HarnessWorkspace:
        """The workspace of a lane run beside others (a curriculum's episode)."""
        return HarnessWorkspace(self.store.run_dir / "cells" / self.cell / "episodes" / f"{k:03d}",
                                self.spec.protocol.harness)

    def spent(self) -> tuple[int, int]:
        """Calls and tokens the cell spent so far: its meters' and the test's."""
        meters = [self.meter, *self.live_meters]
        return (sum(m.calls for m in meters) + self.tally.calls, sum(m.tokens for m in meters) + self.tally.tokens)

    def in_flight(self) -> int:
        """The cell's calls sent and not answered yet (ledgered ahead of the call)."""
        return pending_calls(self.store, self.cell)

    # -- helpers --------------------------------------------------------------------------------
    def _models(self, phase: str, meter: Meter | None, unit: str | None = None) -> dict[str, RoleModel]:
        scope = CallScope(cell=self.cell, phase=phase, meter=meter, unit=unit, batch=unit is not None)
        return {role: m.scoped(scope) for role, m in self.base_models.items()}

    def _check_provider_errors(self, key: str, since: int) -> None:
        if self.spec.protocol.on_provider_error != "stop":
            return
        errors = errors_since(self.store, self.cell, since, shared_phases=(GRADING_PHASE,), unit=key)
        if errors:
            self.store.event("provider_unavailable", {"unit": key, "errors": len(errors), "last": errors[-1]},
                             cell=self.cell)
            raise ProviderUnavailable(
                f"{len(errors)} model call(s) failed after retries in {self.cell} {key} "
                f"(last: {errors[-1]}). Nothing from that unit was kept; run the same command again to resume."
            )

    def _replay(self, unit: Unit, done: UnitResult) -> None:
        """A resumed evaluation counts in the progress display: its stored score once per task it names."""
        if isinstance(done, CheckpointResult | FinalTestResult):
            score: float | None = done.mean
        elif isinstance(done, StageTestResult):
            score = done.score
        else:
            return
        for _ in (*unit.tasks, *unit.test_ids):
            self.tracker.task(score)

    # -- one handler per kind -------------------------------------------------------------------
    def _init(self, unit: Unit, meter: BudgetMeter, ws: HarnessWorkspace) -> Done:
        ws.replace_all({})
        with located(self.cell, unit.key, []):
            self.method.initialize(ws, self.benchmark.system_prompt(), self.benchmark.solver_params())
            tree = ws.tree()
        vid = save_version(self.store, self.cell, tree, parents=[], method=self.method.name,
                           manifest=Manifest(intent="initial harness"), step=unit.key,
                           limits=self.spec.protocol.harness)
        return InitResult(vid, meter.state()), []

    def _practice(self, unit: Unit, meter: BudgetMeter, ws: HarnessWorkspace) -> Done:
        """One practice step; a harness error in it (a bad file the method left, a bad name it wrote) fails the cell
        in one line naming the cell, the step and the version the step started from."""
        with located(self.cell, unit.key, [unit.version]):
            return self._practice_step(unit, meter, ws)

    def _practice_step(self, unit: Unit, meter: BudgetMeter, ws: HarnessWorkspace) -> Done:
        key, current, (task,) = unit.key, unit.version, unit.tasks
        self.store.drop_unit_events(self.cell, key)
        before = load_tree(self.store, current)
        ws.replace_all(before)
        note = self.benchmark.update_note(self.update_note, task)
        models = self._models("practice", meter, key)
        service = StepService(method=self.method, benchmark=self.benchmark, models=models, grader=self.grader,
                              meter=meter, on_event=functools.partial(_store_event, self.store, self.cell, key),
                              current_tree=ws.tree, version_id=current, attempt_limit=unit.attempt_limit,
                              first_attempt=unit.first_attempt, scheduler=self.scheduler)
        status: Literal["ok", "budget"] = "ok"
        version = current
        since = last_call_id(self.store)
        try:
            with attributed(CallScope(cell=self.cell, unit=key)), serving(service.answer) as port:
                visible = unit.visible
                ctx = StepContext(
                    port=port, harness=ws,
                    roles={role: (m.model_name, m.default_params) for role, m in models.items()},
                    train=visible.train if visible else self.practice_splits.views("train"),
                    val=visible.val if visible else self.practice_splits.views("val"),
                    rng=random.Random(f"{self.seed}:{self.cell}:{key}"), step=unit.step,
                    update_note=note, attempt_limit=unit.attempt_limit,
                    function_calling=[role for role, m in models.items() if m.function_calling],
                )
                manifest = self.method.practice(ctx, task.view())
        except BudgetExhausted as err:
            status, manifest = "budget", None
            self.store.event("budget_exhausted", {"unit": key, "reason": str(err)}, cell=self.cell)
            ws.replace_all(before)
        self._check_provider_errors(key, since)
        tree, limits = ws.tree(), self.spec.protocol.harness  # it and every candidate checked before any is stored
        checked = [(cand, check_version(self.cell, key, cand.parents, cand.tree, limits, "candidate version"))
                   for cand in service.candidates]
        for cand, norm in checked:  # the candidates the method searched over, each under its content address
            store_checked(self.store, self.cell, norm, parents=cand.parents, method=self.method.name,
                          manifest=Manifest(intent=cand.intent, evidence=cand.evidence), step=key)
        if status == "ok" and tree_hash(tree) != current:
            version = save_version(self.store, self.cell, tree, parents=[current], method=self.method.name,
                                   manifest=manifest or Manifest(intent="(method gave no manifest)"), step=key,
                                   limits=limits)
        passed = any(r.passed for r in service.attempt_rows if r.phase == "practice")  # rollouts never pass a stage
        done = StepResult(version, meter.state(), status, unit.checkpoint, service.rejections, passed,
                        budget_scope=None if meter is self.meter else "episode")
        return done, service.attempt_rows

    def _checkpoint(self, unit: Unit, meter: BudgetMeter, ws: HarnessWorkspace) -> Done:
        since = last_call_id(self.store)
        rows = evaluate_tree(
            self.method, self.benchmark, load_tree(self.store, unit.version), unit.tasks,
            self._models("select", meter, unit.key), phase="select", version_id=unit.version,
            workers=self.spec.protocol.workers, scheduler=self.scheduler, on_row=lambda r: self.tracker.task(r.score),
        )
        self._check_provider_errors(unit.key, since)
        return CheckpointResult(mean_score(rows), meter.state()), rows

    def _test(self, unit: Unit, meter: BudgetMeter, ws: HarnessWorkspace) -> Done:
        since = last_call_id(self.store)
        rows = self.evaluator.grade_test(
            self.method, load_tree(self.store, unit.version), self._models("test", self.tally, unit.key),
            version_id=unit.version, workers=self.spec.protocol.workers, scheduler=self.test_scheduler,
            on_row=lambda r: self.tracker.task(r.score),
        )
        self._check_provider_errors(unit.key, since)
        return FinalTestResult(mean_score(rows)), rows

    def _stage_test(self, unit: Unit, meter: BudgetMeter, ws: HarnessWorkspace) -> Done:
        (test_id,) = unit.test_ids
        since = last_call_id(self.store)
        tree = load_tree(self.store, unit.version)
        rows = self.evaluator.grade_ids(self.method, tree, self._models("test", self.tally, unit.key), [test_id],
                                        version_id=unit.version, workers=1, on_row=lambda r: self.tracker.task(r.score))
        self._check_provider_errors(unit.key, since)
        diagnostics = self.evaluator.diagnose(test_id, rows[0].answer,
                                              self.evaluator.state_shown(self.method, tree, test_id))
        return StageTestResult(rows[0].score, diagnostics), rows


def _store_event(store: RunStore, cell: str, unit: str, kind: str, payload: dict[str, Any]) -> None:
    """An event a method logged in a practice step (`ctx.log`, `ctx.reject`): stored as the method's."""
    store.event(kind, payload, cell=cell, unit=unit, source="method")
