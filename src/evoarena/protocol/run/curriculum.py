"""The curriculum protocol (CLR-Bench): ordered episodes of stages, state carried across an episode's stages.

Per episode (a chain) the harness starts from the method's initial version. Per stage (a layer): up to
`max_attempts` practice steps of one submitted attempt each — the method updates after every attempt — ending
at the first pass; then the evaluator grades the stage's test task once with the harness as it stands. A
method may also run unsubmitted rollouts (`PracticeContext.rollout`) inside a step. It sees only its own
episode's stages so far as train tasks (the current one last); there is no validation split and no checkpoint
selection. Every step is a unit, so a killed run resumes.

Episodes are independent, so with a concurrent scheduler they run side by side (each in a workspace of its own) in a
cell without budget limits; their results are the ones of the sequential run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evoarena.api import Task, TaskView
from evoarena.harness import HarnessWorkspace, load_tree
from evoarena.protocol.budget import BudgetMeter
from evoarena.protocol.progress import Tracker
from evoarena.protocol.run.cell import CellRunner, _budget_json

MAX_ATTEMPTS = 3


def stages(train: Sequence[Task]) -> list[list[Task]]:
    """Practice tasks grouped by episode, in the benchmark's order; each list holds an episode's stages."""
    episodes: dict[str, list[Task]] = {}
    for t in train:
        episodes.setdefault(str(t.meta["episode"]), []).append(t)
    return [sorted(ts, key=lambda t: int(t.meta["stage"])) for ts in episodes.values()]


class CurriculumCellRunner(CellRunner):
    def run(self) -> str:
        cell = self.plan.cell
        self.store.upsert_cell(
            cell,
            condition=self.plan.condition,
            method=self.method.name,
            model=self.plan.model,
            seed=self.plan.seed,
            status="running",
        )
        initial = self._init()
        episodes = stages(self.practice_splits.train)
        # a stage is two tasks: its practice (however many attempts) and its test; the running score is the layers'
        self.tracker = Tracker(cell, 2 * sum(len(e) for e in episodes), self.report, self._spent)
        self.tracker.phase("stages")
        if self._episodic():
            # episodes side by side, each from the initial version with a meter and a workspace of its own; the
            # cell's spending is their sum (a meter with limits would make one episode's refusal depend on another's
            # timing, so a budgeted cell runs its episodes in order, on one meter)
            meters = [BudgetMeter(self.spec.budget) for _ in episodes]
            self.live_meters = meters
            parallel = self.scheduler.concurrent and len(episodes) > 1
            spaces = [self._episode_ws(k) if parallel else self.ws for k in range(len(episodes))]
            finals = self.scheduler.map(
                lambda k: self._episode(episodes[k], initial, meters[k], spaces[k]), range(len(episodes)))
            self.live_meters = []
            self.meter.restore(_summed(meters))
        else:
            finals = [self._episode(e, initial, self.meter, self.ws) for e in episodes]
        self.tracker.finish()
        current = finals[-1] if finals else initial
        self.store.upsert_cell(
            cell,
            status="done",
            current_version=current,
            selected_version=None,
            budget_json=_budget_json(self.spec, self.meter),
        )
        return current

    def _episodic(self) -> bool:
        """Whether episodes keep meters of their own: a cell with no budget limit, in-process (a method in its own
        process serves one step at a time), and no practice unit written before episodes did (a run resumed from
        older code keeps counting on one meter)."""
        b = self.spec.budget
        if b.max_attempts is not None or b.max_calls is not None or b.max_tokens is not None:
            return False
        if self.spec.protocol.isolation != "in-process":
            return False
        first = self.store.unit_result(self.plan.cell, _first_key(self.practice_splits.train))
        return first is None or first.get("budget_scope") == "episode"

    def _episode_ws(self, k: int) -> HarnessWorkspace:
        return HarnessWorkspace(self.store.run_dir / "cells" / self.plan.cell / "episodes" / f"{k:03d}",
                                self.spec.protocol.harness)

    def _episode(self, episode: Sequence[Task], initial: str, meter: BudgetMeter, ws: HarnessWorkspace) -> str:
        current = initial  # a fresh state per episode
        for k, task in enumerate(episode):
            current = self._stage(task, current, tuple(t.view() for t in episode[: k + 1]), meter, ws)
        return current

    def _stage(self, task: Task, current: str, seen: tuple[TaskView, ...], meter: BudgetMeter,
               ws: HarnessWorkspace) -> str:
        attempts = int(self.spec.benchmark.params.get("max_attempts", MAX_ATTEMPTS))
        for n in range(1, attempts + 1):
            key = f"{task.id}/a{n}"
            done = self.store.unit_result(self.plan.cell, key)
            if done is None:
                if meter.exhausted():
                    break
                done = self._practice_step(key, task, current, n, checkpoint=False, attempt_limit=1, first_attempt=n,
                                           visible=(seen, ()), meter=meter, ws=ws)
            meter.restore(done["budget"])
            current = str(done["version"])
            if done.get("passed") or done["status"] == "budget":
                break
        self.tracker.task(None)
        self._stage_test(task, current)
        return current

    def _stage_test(self, task: Task, version: str) -> None:
        test_id = str(task.meta["test_id"])
        key = f"test/{test_id}"
        done = self.store.unit_result(self.plan.cell, key)
        if done is not None:
            self.tracker.task(done.get("score"))
            return
        since = self._last_call_id()
        tree = load_tree(self.store, version)
        rows = self.evaluator.grade_ids(
            self.method,
            tree,
            self._models("test", self.tally, key),
            [test_id],
            version_id=version,
            workers=1,
            on_row=lambda r: self.tracker.task(r.score),
        )
        self._check_provider_errors(key, since)
        diagnostics = self.evaluator.diagnose(test_id, rows[0].answer,
                                              self.evaluator.state_shown(self.method, tree, test_id))
        self._finish(key, {"score": rows[0].score, "diagnostics": diagnostics}, rows)


def _first_key(train: Sequence[Task]) -> str:
    """The unit key of a curriculum's first practice step (its first episode's first stage, attempt 1)."""
    episodes = stages(train)
    return f"{episodes[0][0].id}/a1" if episodes and episodes[0] else ""


def _summed(meters: Sequence[BudgetMeter]) -> dict[str, Any]:
    """The state of one meter that counted what all of `meters` did."""
    return {"attempts": sum(m.attempts for m in meters), "calls": sum(m.calls for m in meters),
            "tokens": sum(m.tokens for m in meters), "exhausted_by": None}
