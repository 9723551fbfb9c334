"""Validation helpers shared by the archive-based methods (GEPA, EvoSkill)."""

from __future__ import annotations

from evoarena.api import PracticeContext, TaskView


def valset(ctx: PracticeContext) -> tuple[TaskView, ...]:
    """The validation set: the val split, or the train tasks when there is none (as released: GEPA's `valset`
    defaults to the trainset). Under the curriculum protocol that is the episode's stages so far, so it grows."""
    return ctx.val or ctx.train
