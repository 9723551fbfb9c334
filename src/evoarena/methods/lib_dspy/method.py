"""The shape every `dspy.<Optimiser>` method shares: DSPy compiles a `question -> answer` program once, on the first
practice step, over the cell's train split (labels from `ctx.label`) and its val split (no labels), each call of the
program a rollout graded by the cell; the program it returns (DSPy's own dump) is the harness; at test the solver is
sent what the program's ChatAdapter formats and DSPy's parser reads the reply. docs/methods/lib_dspy.md."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field

from evoarena.api import Method, Parsed, PracticeContext, TaskView, harness_toml
from evoarena.harness import HarnessWorkspace, Manifest
from evoarena.methods.lib_dspy.bridge import (
    PROGRAM,
    Halt,
    Program,
    Rollouts,
    cell_lm,
    chat_messages,
    load_dspy,
    new_program,
    program_of,
    read_answer,
    state_text,
)
from evoarena.models import GenParams, Message


class DSPyMethod(Method):
    """One DSPy teleprompter; subclasses name it (`optimiser`) and build it from their `Params` (`teleprompter`),
    and say how to compile (`compile`) and what they hold when the cell's budget stops them (`partial`)."""

    library: ClassVar[str | None] = "dspy"
    optimiser: ClassVar[str]

    class Params(Method.Params):
        program: Program = Field("Predict", description="The DSPy module optimised over `question -> answer`.")
        max_tokens: int = Field(256, ge=1, description="The solver's max_tokens for the program's replies, with "
                                                       "no stop sequence (DSPy's fields span lines).")

    params: Params

    def initialize(self, ws: HarnessWorkspace, system_prompt: str, solver_params: GenParams) -> None:
        """The benchmark's temperature; room for DSPy's fields (no stop sequence, as DSPy's LM sends none)."""
        ws.write("system.md", system_prompt)
        ws.write("harness.toml", harness_toml(solver_params).replace(
            f"max_tokens = {solver_params.max_tokens}\n",
            f"max_tokens = {max(self.params.max_tokens, solver_params.max_tokens or 0)}\nstop = []\n"))

    def build_messages(self, tree: Mapping[str, str], task_text: str, task: TaskView) -> list[Message]:
        return chat_messages(program_of(self.params.program, tree), task.prompt)

    def read_reply(self, tree: Mapping[str, str], text: str) -> Parsed:
        return read_answer(program_of(self.params.program, tree), text)

    @classmethod
    def state_view(cls, tree: Mapping[str, str]) -> dict[str, Any]:
        """The compiled program's instructions and demos (for reports and viewers)."""
        raw = tree.get(PROGRAM)
        if not raw:
            return {}
        state = json.loads(raw)
        pred = state.get("predict", state)
        return {"instructions": pred.get("signature", {}).get("instructions", ""),
                "demos": len(pred.get("demos", [])),
                "bootstrapped": sum(bool(d.get("augmented")) for d in pred.get("demos", []))}

    def teleprompter(self, dspy: Any, metric: Any, ctx: PracticeContext) -> Any:
        raise NotImplementedError

    def compile(self, teleprompter: Any, student: Any, trainset: list[Any], valset: list[Any]) -> Any:
        return teleprompter.compile(student, trainset=trainset)

    def partial(self, teleprompter: Any, trainset: list[Any]) -> Any | None:
        """The program the optimiser itself holds when the cell's budget stops it (None: take the best state
        graded so far, `Rollouts.best`)."""
        return None

    @staticmethod
    def seed(value: int | None, ctx: PracticeContext) -> int:
        """The optimiser's seed: the param, or one drawn from the cell's seeded stream."""
        return value if value is not None else ctx.rng.randrange(2**31)

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if PROGRAM in ctx.harness.tree():
            return None  # the library compiled once, on the whole train split
        dspy = load_dspy()
        train = {t.prompt: t for t in ctx.train}
        val = {t.prompt: t for t in ctx.val if t.prompt not in train}
        trainset = [dspy.Example(question=q, answer=ctx.label(t)).with_inputs("question") for q, t in train.items()]
        valset = [dspy.Example(question=q).with_inputs("question") for q in val]
        calls = Rollouts(ctx, self.params.program, {**train, **val})
        stopped, text = None, None
        with dspy.context(lm=cell_lm(ctx, "solver"), adapter=calls.adapter(), num_threads=1, max_errors=10**6,
                          disable_history=True):
            teleprompter = self.teleprompter(dspy, calls.metric(), ctx)
            try:
                program = self.compile(teleprompter, new_program(self.params.program), trainset, valset)
            except Halt as halt:
                stopped, program = str(halt), self.partial(teleprompter, trainset)
                text = None if program is not None else calls.best()
                ctx.log("library_stopped", {"optimiser": self.optimiser, "reason": stopped,
                                            "rollouts": calls.count, "kept": "partial" if program is not None
                                            else "best graded" if text else "none"})
        if program is not None:
            text = state_text(program)
        calls.keep_candidates(but=text)
        if text is None:
            return None
        ctx.harness.write(PROGRAM, text)
        view = self.state_view({PROGRAM: text})
        intent = f"{self.optimiser}: the compiled program ({view['demos']} demos)"
        return Manifest(intent=intent + (f"; stopped early: {stopped}" if stopped else ""),
                        evidence=f"{calls.count} rollouts on {len(calls.attempts)} tasks")
