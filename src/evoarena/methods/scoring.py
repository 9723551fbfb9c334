"""Validation helpers shared by the methods that evaluate candidates (GEPA, EvoSkill, SkillProx, HGM,
Meta-Harness)."""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence

from evoarena.api import Attempt, PracticeContext, Rollout, TaskView

Outcome = tuple[float, str, str]
"""(score, output, feedback) of one attempt."""


def valset(ctx: PracticeContext) -> tuple[TaskView, ...]:
    """The validation set: the val split, or the train tasks when there is none (as released: GEPA's `valset`
    defaults to the trainset). Under the curriculum protocol that is the episode's stages so far, so it grows."""
    return ctx.val or ctx.train


def rollouts_by_id(ctx: PracticeContext, tasks: Sequence[TaskView], tree: Mapping[str, str],
                   skip: Container[str] = ()) -> dict[str, Attempt]:
    """One rollout of `tree` on each task not in `skip` (results already in hand), in one `ctx.rollouts` request so
    the run's scheduler can run them at once; by task id."""
    return rollouts_of_trees(ctx, [(tree, tasks, skip)])[0]


Job = tuple[Mapping[str, str], Sequence[TaskView], Container[str]]
"""A tree, the tasks to run it on, and the ids among them whose results are already in hand."""


def rollouts_of_trees(ctx: PracticeContext, jobs: Sequence[Job]) -> list[dict[str, Attempt]]:
    """`rollouts_by_id` for several trees (candidates side by side) in one `ctx.rollouts` request, in job order, so
    the attempts are numbered and recorded as the jobs one after another would have them; per job by task id."""
    todo = [[t for t in tasks if t.id not in skip] for _, tasks, skip in jobs]
    ran = iter(ctx.rollouts([Rollout(t, tree=tree) for (tree, _, _), ts in zip(jobs, todo, strict=True) for t in ts]))
    return [{t.id: next(ran) for t in ts} for ts in todo]


def scored(ctx: PracticeContext, task: TaskView, attempt: Attempt) -> Outcome:
    """A provider error scores 0 with no output."""
    if attempt.error:
        return 0.0, "", "(no output: provider error)"
    fb = ctx.feedback(task, attempt)
    return float(fb.score), attempt.text.strip(), fb.message
