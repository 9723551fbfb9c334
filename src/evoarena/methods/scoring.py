"""Validation helpers shared by the methods that evaluate candidates (GEPA, EvoSkill, SkillProx)."""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence

from evoarena.api import Attempt, PracticeContext, TaskView


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
