"""One cell of an experiment (condition × model × seed): practise on train, select on val, grade on test.

Work is split into units (init, each practice step, each checkpoint's validation, the test). A finished
unit is recorded with its attempts in one transaction and skipped on resume; a unit cut off by a kill
is redone from the harness version the previous unit left, so resumed runs end identical.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evoarena.api import GRADING_PHASE, Benchmark, Method, Task, TaskView
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
from evoarena.protocol.run.step_service import Grader, StepService
from evoarena.protocol.scheduler import SERIAL, Scheduler
from evoarena.protocol.splits import PracticeSplits
from evoarena.spec import ExperimentSpec, MethodSpec
from evoarena.store import AttemptRow, RunStore
from evoarena.store.calls import errors_since, last_call_id


class ProviderUnavailable(RuntimeError):
    """Model calls failed after all retries; the unit was not kept, so re-running the command resumes it."""


@dataclass(frozen=True)
class CellPlan:
    cell: str
    condition: str
    method: MethodSpec
    model: str  # the solver's model name
    seed: int


class CellRunner:
    def __init__(
        self,
        plan: CellPlan,
        *,
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
        self.plan = plan
        # a budget on calls or tokens is spent call by call, so which call it refuses depends on their order: such a
        # cell keeps its own work in order (it still runs beside other cells)
        counted = spec.budget.max_calls is not None or spec.budget.max_tokens is not None
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
        self.live_meters: list[BudgetMeter] = []  # besides self.meter: episodes' own, while they run
        self.tracker = Tracker(plan.cell, 0, None, self._spent)
        self.method = method
        self.meter = BudgetMeter(spec.budget)
        self.ws = HarnessWorkspace(store.run_dir / "cells" / plan.cell / "harness", spec.protocol.harness)
        self.grader = Grader({t.id: t for t in practice.train + practice.val}, benchmark.grade)

    # -- helpers --------------------------------------------------------------------------------
    def _models(self, phase: str, meter: Meter | None, unit: str | None = None) -> dict[str, RoleModel]:
        scope = CallScope(cell=self.plan.cell, phase=phase, meter=meter, unit=unit, batch=unit is not None)
        return {role: m.scoped(scope) for role, m in self.base_models.items()}

    def _spent(self) -> tuple[int, int]:
        meters = [self.meter, *self.live_meters]
        return (sum(m.calls for m in meters) + self.tally.calls, sum(m.tokens for m in meters) + self.tally.tokens)

    def _last_call_id(self) -> int:
        return last_call_id(self.store)

    def _check_provider_errors(self, key: str, since: int) -> None:
        if self.spec.protocol.on_provider_error != "stop":
            return
        errors = errors_since(self.store, self.plan.cell, since, shared_phases=(GRADING_PHASE,), unit=key)
        if errors:
            self._event("provider_unavailable", {"unit": key, "errors": len(errors), "last": errors[-1]})
            raise ProviderUnavailable(
                f"{len(errors)} model call(s) failed after retries in {self.plan.cell} {key} "
                f"(last: {errors[-1]}). Nothing from that unit was kept; run the same command again to resume."
            )

    def _finish(self, key: str, result: dict[str, Any], rows: Sequence[AttemptRow]) -> None:
        self.store.finish_unit(self.plan.cell, key, result, rows)

    def _event(self, kind: str, payload: dict[str, Any]) -> None:
        self.store.event(kind, payload, cell=self.plan.cell)

    def _schedule(self) -> list[tuple[str, Task, bool]]:
        """(unit key, task, is checkpoint) for every practice step; order seeded per epoch."""
        steps: list[tuple[str, Task, bool]] = []
        every = self.spec.protocol.select_every
        train = list(self.practice_splits.train)
        for epoch in range(self.spec.protocol.epochs):
            order = train[:]
            random.Random(f"{self.plan.seed}:{self.plan.cell}:order:{epoch}").shuffle(order)
            for i, task in enumerate(order):
                n = len(steps) + 1
                checkpoint = i == len(order) - 1 or (every > 0 and n % every == 0)
                steps.append((f"practice/e{epoch}/{i:04d}/{task.id}", task, checkpoint))
        return steps

    # -- phases ---------------------------------------------------------------------------------
    def run(self) -> str:
        cell, name = self.plan.cell, self.method.name
        self.store.upsert_cell(cell, condition=self.plan.condition, method=name, model=self.plan.model,
                               seed=self.plan.seed, status="running")
        current = self._init()
        steps = self._schedule()
        selecting = bool(self.practice_splits.val) and self.spec.protocol.select != "last"
        planned = 1 + sum(c for _, _, c in steps) if selecting else 0  # the initial version and each checkpoint
        self.tracker = Tracker(cell, len(steps) + planned * len(self.practice_splits.val) + self.evaluator.size,
                               self.report, self._spent)
        self.tracker.phase("practice")
        checkpoints = [current]
        for n, (key, task, is_checkpoint) in enumerate(steps):
            done = self.store.unit_result(cell, key)
            if done is None:
                if self.meter.exhausted():
                    break
                done = self._practice_step(key, task, current, n, is_checkpoint)
            self.meter.restore(done["budget"])
            current = done["version"]
            if done["checkpoint"]:
                checkpoints.append(current)
            self.tracker.task(1.0 if done.get("passed") else 0.0)
            if done["status"] == "budget":
                break
        if checkpoints[-1] != current:
            checkpoints.append(current)
        candidates = list(dict.fromkeys(checkpoints))
        if selecting:
            self.tracker.phase("select", extra=max(0, len(candidates) - planned) * len(self.practice_splits.val))
        selected = self._select(candidates)
        self.tracker.phase("test")
        self._test(selected)
        self.tracker.finish()
        self.store.upsert_cell(cell, status="done", current_version=current, selected_version=selected,
                               budget_json=_budget_json(self.spec, self.meter))
        return selected

    def _init(self) -> str:
        done = self.store.unit_result(self.plan.cell, "init")
        if done is not None:
            return str(done["version"])
        self.ws.replace_all({})
        with located(self.plan.cell, "init", []):
            self.method.initialize(self.ws, self.benchmark.system_prompt(), self.benchmark.solver_params())
            tree = self.ws.tree()
        vid = save_version(self.store, self.plan.cell, tree, parents=[], method=self.method.name,
                           manifest=Manifest(intent="initial harness"), step="init", limits=self.spec.protocol.harness)
        self._finish("init", {"version": vid, "budget": self.meter.state()}, [])
        return vid

    def _practice_step(self, key: str, task: Task, current: str, n: int, checkpoint: bool,
                       **options: Any) -> dict[str, Any]:
        """One practice unit (`_practice_unit`); a harness error in it (a bad file the method left, a bad name it
        wrote) fails the cell in one line naming the cell, the step and the version the step started from."""
        with located(self.plan.cell, key, [current]):
            return self._practice_unit(key, task, current, n, checkpoint, **options)

    def _practice_unit(
        self, key: str, task: Task, current: str, n: int, checkpoint: bool, *, attempt_limit: int | None = None,
        first_attempt: int = 1, visible: tuple[tuple[TaskView, ...], tuple[TaskView, ...]] | None = None,
        meter: BudgetMeter | None = None, ws: HarnessWorkspace | None = None,
    ) -> dict[str, Any]:
        """One practice unit. `visible` overrides the (train, val) views the method may use in this step; `meter`
        and `ws` the cell's (an episode with a meter of its own marks the unit's budget as that episode's)."""
        meter = meter or self.meter
        ws = ws or self.ws
        self.store.drop_unit_events(self.plan.cell, key)
        before = load_tree(self.store, current)
        ws.replace_all(before)
        note = self.benchmark.update_note(self.plan.method.params.get("update_note"), task)
        models = self._models("practice", meter, key)
        service = StepService(method=self.method, benchmark=self.benchmark, models=models, grader=self.grader,
                              meter=meter, on_event=functools.partial(_store_event, self.store, self.plan.cell, key),
                              current_tree=ws.tree, version_id=current, attempt_limit=attempt_limit,
                              first_attempt=first_attempt, scheduler=self.scheduler)
        status, version = "ok", current
        since = self._last_call_id()
        try:
            with attributed(CallScope(cell=self.plan.cell, unit=key)), serving(service.handle) as port:
                ctx = StepContext(
                    port=port, harness=ws,
                    roles={role: (m.model_name, m.default_params) for role, m in models.items()},
                    train=visible[0] if visible else self.practice_splits.views("train"),
                    val=visible[1] if visible else self.practice_splits.views("val"),
                    rng=random.Random(f"{self.plan.seed}:{self.plan.cell}:{key}"), step=n,
                    update_note=note, attempt_limit=attempt_limit,
                    function_calling=[role for role, m in models.items() if m.function_calling],
                )
                manifest = self.method.practice(ctx, task.view())
        except BudgetExhausted as err:
            status, manifest = "budget", None
            self._event("budget_exhausted", {"unit": key, "reason": str(err)})
            ws.replace_all(before)
        self._check_provider_errors(key, since)
        tree, limits = ws.tree(), self.spec.protocol.harness  # it and every candidate checked before any is stored
        checked = [(cand, check_version(self.plan.cell, key, cand.parents, cand.tree, limits, "candidate version"))
                   for cand in service.candidates]
        for cand, norm in checked:  # the candidates the method searched over, each under its content address
            store_checked(self.store, self.plan.cell, norm, parents=cand.parents, method=self.method.name,
                          manifest=Manifest(intent=cand.intent, evidence=cand.evidence), step=key)
        if status == "ok" and tree_hash(tree) != current:
            version = save_version(self.store, self.plan.cell, tree, parents=[current], method=self.method.name,
                                   manifest=manifest or Manifest(intent="(method gave no manifest)"), step=key,
                                   limits=limits)
        passed = any(r.passed for r in service.attempt_rows if r.phase == "practice")  # rollouts never pass a stage
        result = {"version": version, "budget": meter.state(), "status": status, "checkpoint": checkpoint,
                  "rejections": service.rejections, "passed": passed}
        if meter is not self.meter:
            result["budget_scope"] = "episode"
        self._finish(key, result, service.attempt_rows)
        return result

    def _select(self, candidates: list[str]) -> str:
        if not self.practice_splits.val or self.spec.protocol.select == "last":
            return candidates[-1]
        scores: dict[str, float] = {}
        self.meter.enforce = False  # selection spends from the budget but finishes the checkpoint it started
        for vid in candidates:
            key = f"select/{vid}"
            done = self.store.unit_result(self.plan.cell, key)
            if done is None:
                if self.meter.exhausted() and scores:
                    break
                since = self._last_call_id()
                rows = evaluate_tree(
                    self.method, self.benchmark, load_tree(self.store, vid), self.practice_splits.val,
                    self._models("select", self.meter, key), phase="select", version_id=vid,
                    workers=self.spec.protocol.workers, scheduler=self.scheduler,
                    on_row=lambda r: self.tracker.task(r.score),
                )
                self._check_provider_errors(key, since)
                done = {"mean": mean_score(rows), "budget": self.meter.state()}
                self._finish(key, done, rows)
            else:
                for _ in self.practice_splits.val:
                    self.tracker.task(float(done["mean"]))
            self.meter.restore(done["budget"])
            scores[vid] = float(done["mean"])
        best = max(scores.values())
        return next(v for v in candidates if v in scores and scores[v] == best)  # ties: the earliest

    def _test(self, selected: str) -> None:
        key = f"test/{selected}"
        if self.store.unit_result(self.plan.cell, key) is not None:
            return
        since = self._last_call_id()
        rows = self.evaluator.grade_test(
            self.method, load_tree(self.store, selected), self._models("test", self.tally, key),
            version_id=selected, workers=self.spec.protocol.workers, scheduler=self.test_scheduler,
            on_row=lambda r: self.tracker.task(r.score),
        )
        self._check_provider_errors(key, since)
        self._finish(key, {"mean": mean_score(rows)}, rows)


def _store_event(store: RunStore, cell: str, unit: str, kind: str, payload: dict[str, Any]) -> None:
    """An event a method logged in a practice step (`ctx.log`, `ctx.reject`): stored as the method's."""
    store.event(kind, payload, cell=cell, unit=unit, source="method")


def _budget_json(spec: ExperimentSpec, meter: BudgetMeter) -> str:
    return json.dumps({"limits": spec.budget.model_dump(), "used": meter.state()}, sort_keys=True)
