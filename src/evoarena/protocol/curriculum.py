"""The curriculum protocol (CLR-Bench): ordered episodes of stages, state carried across an episode's stages.

Per episode (a chain) the harness starts from the method's initial version. Per stage (a layer): up to
`max_attempts` practice steps of one submitted attempt each — the method updates after every attempt — ending
at the first pass; then the evaluator grades the stage's test task once with the harness as it stands. A
method may also run unsubmitted rollouts (`PracticeContext.rollout`) inside a step. It sees only its own
episode's stages so far as train tasks (the current one last); there is no validation split and no checkpoint
selection. Every step is a unit, so a killed run resumes.
"""

from __future__ import annotations

from collections.abc import Sequence

from evoarena.api import Task, TaskView
from evoarena.harness import load_tree
from evoarena.protocol.cell import CellRunner, _budget_json

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
        total = sum(len(e) for e in episodes)
        done_stages = 0
        current = initial
        for episode in episodes:
            current = initial  # a fresh state per episode
            for k, task in enumerate(episode):
                current = self._stage(task, current, tuple(t.view() for t in episode[: k + 1]))
                done_stages += 1
                self.progress(cell, done_stages, total)
        self.store.upsert_cell(
            cell,
            status="done",
            current_version=current,
            selected_version=None,
            budget_json=_budget_json(self.spec, self.meter),
        )
        return current

    def _stage(self, task: Task, current: str, seen: tuple[TaskView, ...]) -> str:
        attempts = int(self.spec.benchmark.params.get("max_attempts", MAX_ATTEMPTS))
        for n in range(1, attempts + 1):
            key = f"{task.id}/a{n}"
            done = self.store.unit_result(self.plan.cell, key)
            if done is None:
                if self.meter.exhausted():
                    break
                done = self._practice_step(key, task, current, n, checkpoint=False, attempt_limit=1, first_attempt=n,
                                           visible=(seen, ()))
            self.meter.restore(done["budget"])
            current = str(done["version"])
            if done.get("passed") or done["status"] == "budget":
                break
        self._stage_test(task, current)
        return current

    def _stage_test(self, task: Task, version: str) -> None:
        test_id = str(task.meta["test_id"])
        key = f"test/{test_id}"
        if self.store.unit_result(self.plan.cell, key) is not None:
            return
        since = self._last_call_id()
        tree = load_tree(self.store, version)
        rows = self.evaluator.grade_ids(
            self.method,
            tree,
            self._models("test", None, key)["solver"],
            [test_id],
            version_id=version,
            workers=1,
        )
        self._check_provider_errors(key, since)
        diagnostics = self.evaluator.diagnose(test_id, rows[0].answer,
                                              self.evaluator.state_shown(self.method, tree, test_id))
        self._finish(key, {"score": rows[0].score, "diagnostics": diagnostics}, rows)
