"""Shared pieces of SkillProx: batch evaluation (H and C from the arena's feedback), the record files' names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from evoarena.api import Attempt, PracticeContext, TaskView
from evoarena.methods.scoring import rollouts_of_trees
from evoarena.methods.skillprox.state import BatchRow, TaskMark

MEMORY = "memory/skillprox"
STATE = f"{MEMORY}/state.json"
HISTORY = f"{MEMORY}/history.jsonl"
ITERATIONS = f"{MEMORY}/iterations.jsonl"
PROX = f"{MEMORY}/prox.json"
TOL = 1e-9
"""Float slack for the gates' `>=` (means of the same number of 0/1 values can differ in the last bit)."""


@dataclass(frozen=True)
class TaskResult:
    task: TaskView
    passed: bool  # hard: every cell right (`Feedback.passed`)
    score: float  # cell accuracy (`Feedback.score`)
    output: str
    feedback: str


@dataclass(frozen=True)
class Batch:
    results: tuple[TaskResult, ...]

    @property
    def hard(self) -> float:
        """H: share of tasks with every cell right."""
        return mean(float(r.passed) for r in self.results)

    @property
    def cell(self) -> float:
        """C: mean cell accuracy."""
        return mean(r.score for r in self.results)

    def row(self) -> BatchRow:
        return BatchRow(H=self.hard, C=self.cell,
                        tasks={r.task.id: TaskMark(passed=r.passed, score=r.score) for r in self.results})


def mean(xs: Iterable[float]) -> float:
    vals = list(xs)
    return sum(vals) / len(vals) if vals else 0.0


def result_of(ctx: PracticeContext, task: TaskView, attempt: Attempt) -> TaskResult:
    """A provider error counts as a failure with no output (it is never graded)."""
    if attempt.error:
        return TaskResult(task, False, 0.0, "", "(no output: provider error)")
    fb = ctx.feedback(task, attempt)
    return TaskResult(task, bool(fb.passed), float(fb.score), attempt.text.strip(), fb.message)


def evaluate(ctx: PracticeContext, tree: Mapping[str, str], tasks: Sequence[TaskView],
             known: Mapping[str, TaskResult] | None = None) -> Batch:
    """Run `tree` on `tasks` as internal evaluations (`ctx.rollouts`); `known` holds results already in hand for
    this very tree (the step's submitted attempt, the plan's evaluation of X_0)."""
    return evaluate_trees(ctx, [tree], tasks, known)[0]


def evaluate_trees(ctx: PracticeContext, trees: Sequence[Mapping[str, str]], tasks: Sequence[TaskView],
                   known: Mapping[str, TaskResult] | None = None) -> list[Batch]:
    """`evaluate` of several trees on the same tasks, every re-execution in one `ctx.rollouts` request (in tree order,
    as one tree after another would number and record them), then graded in the same order; `known` is for the
    first tree only."""
    held = [dict(known or {}), *({} for _ in trees[1:])]
    ran = rollouts_of_trees(ctx, [(tree, tasks, h) for tree, h in zip(trees, held, strict=True)])
    return [Batch(tuple(h[t.id] if t.id in h else result_of(ctx, t, by_id[t.id]) for t in tasks))
            for h, by_id in zip(held, ran, strict=True)]


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, marking a cut."""
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters cut]"
