"""`frozen`: the reference with no update. It still attempts practice tasks so budgets compare."""

from __future__ import annotations

from evoarena.benchmarks.base import TaskView
from evoarena.harness import Manifest
from evoarena.methods.base import Method
from evoarena.protocol.context import PracticeContext


class Frozen(Method):
    name = "frozen"

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        ctx.solve(task)
        return None
