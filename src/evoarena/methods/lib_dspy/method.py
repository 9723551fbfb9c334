"""DSPy's optimisers as methods (`dspy.<Optimiser>`): the library compiles a `question -> answer` program on the
cell's train split, every call of the program a rollout graded by the cell; the program it returns (DSPy's own dump)
is the harness, and at test the solver is sent what the program's ChatAdapter formats and DSPy's parser reads the
reply. docs/methods/lib_dspy.md."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field

from evoarena.api import Method, Parsed, PracticeContext, TaskView, harness_toml, method
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
    """One DSPy teleprompter run once, on the first practice step, over the train split (labels from `ctx.label`);
    later steps keep its program. Subclasses name the optimiser and build it from their `Params`."""

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

    def teleprompter(self, dspy: Any, metric: Any) -> Any:
        raise NotImplementedError

    def compile(self, dspy: Any, teleprompter: Any, student: Any, trainset: list[Any]) -> Any:
        return teleprompter.compile(student, trainset=trainset)

    def partial(self, teleprompter: Any, trainset: list[Any]) -> Any | None:
        """The program the optimiser holds when the cell's budget stops it (None: none yet)."""
        return None

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if PROGRAM in ctx.harness.tree():
            return None  # the library compiled once, on the whole train split
        dspy = load_dspy()
        tasks = {t.prompt: t for t in ctx.train}
        trainset = [dspy.Example(question=t.prompt, answer=ctx.label(t)).with_inputs("question")
                    for t in tasks.values()]
        calls = Rollouts(ctx, self.params.program, tasks)
        teleprompter = self.teleprompter(dspy, calls.metric())
        stopped = None
        with dspy.context(lm=cell_lm(ctx, "solver"), adapter=calls.adapter(), num_threads=1, max_errors=10**6,
                          disable_history=True):
            try:
                program = self.compile(dspy, teleprompter, new_program(self.params.program), trainset)
            except Halt as halt:
                stopped, program = str(halt), self.partial(teleprompter, trainset)
        if program is None:
            return None
        ctx.harness.write(PROGRAM, state_text(program))
        demos = len(program.predictors()[0].demos)
        intent = f"{self.optimiser}: the compiled program ({demos} demos)"
        return Manifest(intent=intent + (f"; stopped early: {stopped}" if stopped else ""),
                        evidence=f"{len(calls.attempts)} train tasks run")


@method("dspy.LabeledFewShot")
class LabeledFewShot(DSPyMethod):
    """`dspy.LabeledFewShot`: k train examples with their labels as demos (no model call)."""

    optimiser = "LabeledFewShot"

    class Params(DSPyMethod.Params):
        k: int = Field(16, ge=0, description="Demos sampled from the trainset (`random.Random(0)`, as DSPy).")

    params: Params

    def teleprompter(self, dspy: Any, metric: Any) -> Any:
        return dspy.LabeledFewShot(k=self.params.k)


@method("dspy.BootstrapFewShot")
class BootstrapFewShot(DSPyMethod):
    """`dspy.BootstrapFewShot`: the teacher (the program with labeled demos) runs each train example; a trace the
    metric passes becomes a demo; labeled examples fill the rest."""

    optimiser = "BootstrapFewShot"

    class Params(DSPyMethod.Params):
        max_bootstrapped_demos: int = Field(4, ge=0, description="Demos from traces the metric passed.")
        max_labeled_demos: int = Field(16, ge=0, description="Caps all demos; labeled ones fill what "
                                                              "bootstrapping left (and seed the teacher).")
        max_rounds: int = Field(1, ge=1, description="Attempts per train example (later ones at temperature 1).")
        metric_threshold: float | None = Field(None, description="A trace passes when the metric is at least "
                                                                 "this (None: when it is truthy).")

    params: Params

    def teleprompter(self, dspy: Any, metric: Any) -> Any:
        p = self.params
        return dspy.BootstrapFewShot(metric=metric, metric_threshold=p.metric_threshold,
                                     max_bootstrapped_demos=p.max_bootstrapped_demos,
                                     max_labeled_demos=p.max_labeled_demos, max_rounds=p.max_rounds)

    def partial(self, teleprompter: Any, trainset: list[Any]) -> Any | None:
        """DSPy's own `_train` on the traces bootstrapped before the stop (the rest of the trainset is the labeled
        pool, as `_bootstrap` leaves it)."""
        import random

        traces = getattr(teleprompter, "name2traces", None)
        if traces is None:
            return None
        done = {d.question for demos in traces.values() for d in demos}
        teleprompter.validation = [x for x in trainset if x.question not in done]
        random.Random(0).shuffle(teleprompter.validation)
        return teleprompter._train()
