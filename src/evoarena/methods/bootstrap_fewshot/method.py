"""`bootstrap_fewshot`: worked demonstrations kept in the harness, as DSPy's BootstrapFewShot builds them.

The teacher (the zero-shot starting harness) attempts each practice task; an attempt that passes the
metric becomes a bootstrapped demo (up to `max_bootstrapped_demos`); tasks it fails fill the labeled
slots (up to `max_labeled_demos`) with the train reference. Demos live in `memory/demos.json`.
Differences from DSPy are in docs/methods/bootstrap_fewshot.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import BaseModel, Field

from evoarena.api import Method, PracticeContext, TaskView, method
from evoarena.harness import Manifest
from evoarena.harness.state import parse_state
from evoarena.methods.prompting import render_prompt

DEMOS = "memory/demos.json"


class Demo(BaseModel):
    task_id: str
    question: str
    answer: str


class Demos(BaseModel):
    """The demos file: bootstrapped demos (the teacher's passing outputs) and labeled ones (train references)."""

    bootstrapped: list[Demo] = []
    labeled: list[Demo] = []

    def text(self) -> str:
        """The file as it has always been written (two-space indent, keys in order): the solver's context is made
        from it and its bytes are part of every version's content address."""
        return json.dumps(self.model_dump(), indent=2, ensure_ascii=False) + "\n"


def read_demos(tree: Mapping[str, str]) -> Demos:
    raw = tree.get(DEMOS)
    return parse_state(DEMOS, raw, Demos) if raw else Demos()


@method("bootstrap_fewshot")
class BootstrapFewShot(Method):

    class Params(Method.Params):
        max_bootstrapped_demos: int = Field(4, ge=0, description="Demos from practice attempts the metric passed.")
        max_labeled_demos: int = Field(16, ge=0, description="A cap on all demos, as in DSPy: labeled ones (train "
                                                             "references) fill what bootstrapping left.")

    params: Params

    @property
    def max_total(self) -> int:
        """As in DSPy, `max_labeled_demos` caps all demos: labeled ones fill what bootstrapping left."""
        return max(self.params.max_labeled_demos, self.params.max_bootstrapped_demos)

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        demos = read_demos(tree)
        ordered = demos.bootstrapped + demos.labeled
        return render_prompt(__package__, "context", demos=[d for d in ordered if d.task_id != task.id])

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        tree = ctx.harness.tree()
        demos = read_demos(tree)
        have = demos.bootstrapped + demos.labeled
        if any(d.task_id == task.id for d in have):  # one pass over the trainset, as in DSPy
            return None
        labeled_full = len(have) >= self.max_total
        if len(demos.bootstrapped) >= self.params.max_bootstrapped_demos and labeled_full:
            return None
        teacher = {k: v for k, v in tree.items() if k != DEMOS}  # the zero-shot starting program
        kind = "labeled"
        answer = ctx.label(task)
        if len(demos.bootstrapped) < self.params.max_bootstrapped_demos:
            attempt = ctx.solve(task, tree=teacher)
            if not attempt.error and ctx.feedback(task, attempt).passed:
                kind, answer = "bootstrapped", attempt.text.strip()
        if kind == "labeled" and labeled_full:
            return None
        if kind == "bootstrapped" and len(have) >= self.max_total:
            demos.labeled.pop()  # a bootstrapped demo takes the place of the newest labeled one
        demo = Demo(task_id=task.id, question=task.prompt, answer=answer)
        (demos.bootstrapped if kind == "bootstrapped" else demos.labeled).append(demo)
        ctx.harness.write(DEMOS, demos.text())
        return Manifest(intent=f"add a {kind} demo", evidence=task.id)
