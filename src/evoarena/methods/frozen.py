"""`frozen`: the reference with no update. It still attempts practice tasks so budgets compare."""

from __future__ import annotations

from evoarena.api import Method, PracticeContext, TaskView, method
from evoarena.harness import Manifest


@method("frozen")
class Frozen(Method):

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        ctx.solve(task)
        return None
