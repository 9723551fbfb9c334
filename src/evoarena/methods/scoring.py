"""Validation helpers shared by the methods that evaluate candidates (GEPA, EvoSkill, SkillProx, HGM,
Meta-Harness)."""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence

from evoarena.api import Attempt, PracticeContext, TaskView

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
    todo = [t for t in tasks if t.id not in skip]
    return dict(zip([t.id for t in todo], ctx.rollouts(todo, tree=tree), strict=True))


def scored(ctx: PracticeContext, task: TaskView, attempt: Attempt) -> Outcome:
    """A provider error scores 0 with no output."""
    if attempt.error:
        return 0.0, "", "(no output: provider error)"
    fb = ctx.feedback(task, attempt)
    return float(fb.score), attempt.text.strip(), fb.message
