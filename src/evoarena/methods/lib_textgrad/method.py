"""`textgrad.TGD`: TextGrad 0.1.8's prompt optimisation (`TextualGradientDescent` on the system prompt) run in a cell.

As in TextGrad's `evaluation/prompt_optimization.py`: the system prompt is a `Variable` with `requires_grad`, the
task model a `BlackboxLLM` over it, each batch example's loss a `StringBasedFunction` of the prediction and the
ground truth, `tg.sum(losses).backward()`, `optimizer.step()`, then the validation revert. The library's own objects
do all of it; what the bridge changes is where the calls go (bridge.py) and that the metric is the cell's grader.
State: `memory/textgrad/state.json`; the harness's `system.md` is the prompt after the revert. Differences from
running the example directly: docs/methods/textgrad.TGD.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, Field

from evoarena.api import (
    Attempt,
    Feedback,
    Method,
    PracticeContext,
    Probe,
    ProbeExample,
    Reply,
    TaskView,
    Verdict,
    method,
)
from evoarena.api.probe import judged, refused
from evoarena.harness import Manifest
from evoarena.harness.state import parse_state
from evoarena.methods.lib_textgrad.bridge import NoReply, engines, textgrad
from evoarena.methods.scoring import valset

STATE = "memory/textgrad/state.json"
ROLE = "proposer"
QUERY_ROLE = "query to the language model"
"""The role description of each query Variable (prompt_optimization.py, the training loop)."""
ANSWER_ROLE = "correct answer for the query"
"""The role description of each ground-truth Variable (prompt_optimization.py, the training loop)."""
FN_PURPOSE = "The runtime of string-based function that checks if the prediction is correct."
"""The loss function's purpose as `textgrad.tasks.load_task` states it for its string-based tasks."""
PROMPT_ROLE = ("structured system prompt to a somewhat capable language model that specifies the behavior and "
               "strategies for the QA task")
"""The optimised system prompt's role description (prompt_optimization.py)."""
TAGS = ("<IMPROVED_VARIABLE>", "</IMPROVED_VARIABLE>")
"""TextualGradientDescent's default `new_variable_tags`."""

Loss = Literal["correct", "message"]
"""What the string-based loss returns: `correct` 1/0 as the example's `string_based_equality_fn`; `message` the
grader's feedback message."""


def keeps(val_performance: float, previous_performance: float) -> bool:
    """`run_validation_revert`: the new prompt stays unless its val accuracy is strictly below the last kept one."""
    return not val_performance < previous_performance


class TgdState(BaseModel):
    """Where the data loader is (epochs begun, steps taken in this one, this epoch's shuffled train ids), the
    example's `results` (val accuracy and prompt after each step's revert) and TGD's gradient memory."""

    epoch: int = 0
    step: int = 0
    order: list[str] = []
    validation_acc: list[float] = []
    prompt: list[str] = []
    gradient_memory: list[str] = []
    done: bool = False


def read_state(tree: Mapping[str, str]) -> TgdState | None:
    text = tree.get(STATE)
    return None if text is None else parse_state(STATE, text, TgdState)


def next_batch(state: TgdState, train: Sequence[TaskView], ctx_rng: Any, batch_size: int, max_epochs: int,
               steps_per_epoch: int | None) -> list[TaskView] | None:
    """The next batch of TextGrad's `DataLoader(shuffle=True)` over train, `steps_per_epoch` batches an epoch (the
    example's `if steps == 3: break`), `max_epochs` epochs; None when they are spent. Mutates `state`."""
    by_id = {t.id: t for t in train}
    batches = math.ceil(len(state.order) / batch_size) if state.order else 0
    limit = batches if steps_per_epoch is None else min(batches, steps_per_epoch)
    if state.step >= limit:
        if state.epoch >= max_epochs or not train:
            state.done = True
            return None
        state.order = [t.id for t in train]
        ctx_rng.shuffle(state.order)
        state.epoch, state.step = state.epoch + 1, 0
    ids = state.order[state.step * batch_size:(state.step + 1) * batch_size]
    state.step += 1
    return [by_id[i] for i in ids if i in by_id]


def query_of(attempt: Attempt, task: TaskView) -> str:
    """What the solver was sent as the query: the attempt's last user message (the benchmark's task text)."""
    users = [m.content for m in attempt.messages if m.role == "user"]
    return users[-1] if users else task.prompt


def graded(ctx: PracticeContext, task: TaskView, attempt: Attempt) -> Feedback:
    if attempt.error:
        return Feedback(score=0.0, passed=False, message="(no output: provider error)")
    return ctx.feedback(task, attempt)


def check_update(reply: Reply) -> Verdict:
    """A probe reply read as TGD's `step` reads it: the text between the tags, which must change the variable."""
    if reply.cut_off:
        return refused("update cut off at max_tokens")
    if TAGS[0] not in reply.text or TAGS[1] not in reply.text.split(TAGS[0], 1)[1]:
        return refused("no <IMPROVED_VARIABLE> span")
    new = reply.text.split(TAGS[0])[1].split(TAGS[1])[0].strip()
    return judged(bool(new) and new != PROBE_PROMPT, "the update repeats the variable")


PROBE_PROMPT = "You will answer a reasoning question. Think step by step."


@method("textgrad.TGD")
class TextGradTGD(Method):
    """TextGrad's `TextualGradientDescent` on the solver's system prompt, under the cell's roles and grader."""

    roles = ("solver", ROLE)
    library = "textgrad"

    class Params(Method.Params):
        batch_size: int = Field(3, ge=1, description="Train examples per step (the example's `--batch_size`).")
        max_epochs: int = Field(3, ge=1, description="Passes of the shuffled data loader (`--max_epochs`).")
        steps_per_epoch: int | None = Field(4, ge=1, description="Steps per epoch before the next one (the "
                                            "example's `if steps == 3: break`); null: the whole train split.")
        run_validation: bool = Field(True, description="Revert a step whose val accuracy is below the last kept "
                                     "one (`--run_validation`, as the README's commands run it).")
        loss: Loss = Field("correct", description="The string-based loss: `correct` 1/0 as "
                           "`string_based_equality_fn`; `message` the grader's feedback message.")
        role_description: str = Field(PROMPT_ROLE, min_length=1,
                                      description="The system prompt Variable's role description.")
        constraints: list[str] = Field([], description="TextualGradientDescent's `constraints`.")
        gradient_memory: int = Field(0, ge=0, description="TextualGradientDescent's `gradient_memory`: past "
                                     "gradients shown to the optimizer.")

    params: Params

    def probes(self, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
        """TGD's update prompt (its user message) with each example's conversation and feedback as the context."""
        if not examples:
            return ()
        textgrad()
        from textgrad.autograd.llm_backward_prompts import CONVERSATION_TEMPLATE
        from textgrad.optimizer.optimizer_prompts import GRADIENT_TEMPLATE, construct_tgd_prompt

        contexts = "\n".join(GRADIENT_TEMPLATE.format(
            context=CONVERSATION_TEMPLATE.format(system_prompt=PROBE_PROMPT, prompt=ex.task,
                                                 response_value=ex.output.strip()),
            response_desc="response from the language model", variable_desc=self.params.role_description,
            feedback=ex.feedback) for ex in examples)
        prompt = construct_tgd_prompt(
            variable_desc=self.params.role_description, variable_value=PROBE_PROMPT, variable_grad=contexts,
            variable_short=PROBE_PROMPT, constraint_text="", new_variable_start_tag=TAGS[0],
            new_variable_end_tag=TAGS[1], in_context_examples="", gradient_memory="")
        return (Probe("update/all", ROLE, prompt, check_update),)

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if ctx.attempt_limit is not None:  # the protocol counts submissions: submit once with the live harness
            ctx.solve(task)
        fresh = not ctx.harness.exists(STATE)
        state = ctx.harness.load_state(STATE, TgdState, default=TgdState())
        current = ctx.harness.read("system.md", "").strip()
        if fresh:
            state.prompt.append(current)
            if self.params.run_validation:
                state.validation_acc.append(self._val_accuracy(ctx, current))
                ctx.log("textgrad_seed", {"val": state.validation_acc[0]})
        p = self.params
        batch = next_batch(state, ctx.train, ctx.rng, p.batch_size, p.max_epochs, p.steps_per_epoch)
        if batch is None:
            ctx.harness.save_state(STATE, state)
            ctx.log("textgrad_done", {"epochs": state.epoch})
            return Manifest(intent="TextGrad: epochs spent") if fresh else None
        proposed = self._step(ctx, current, batch, state)
        manifest = self._validate(ctx, current, proposed, state) if proposed is not None else None
        ctx.harness.save_state(STATE, state)
        return manifest or Manifest(intent=f"TextGrad epoch {state.epoch} step {state.step}: no update")

    def _tree(self, ctx: PracticeContext, prompt: str) -> dict[str, str]:
        return {**ctx.harness.tree(), "system.md": prompt}

    def _val_accuracy(self, ctx: PracticeContext, prompt: str) -> float:
        """`eval_dataset` on val: each val task once with `prompt`, the mean of the cell's grades."""
        tasks = valset(ctx)
        attempts = ctx.rollouts(tasks, tree=self._tree(ctx, prompt))
        scores = [graded(ctx, t, a).score for t, a in zip(tasks, attempts, strict=True)]
        return sum(scores) / len(scores) if scores else 0.0

    def _step(self, ctx: PracticeContext, prompt: str, batch: Sequence[TaskView], state: TgdState) -> str | None:
        """One training step of the example's loop on `batch`; the optimizer's new prompt, or None (no reply, or a
        reply without the tags — TGD raises IndexError; here it is a rejected update)."""
        attempts = ctx.rollouts(batch, tree=self._tree(ctx, prompt))
        prepared = {(prompt, query_of(a, t)): a for t, a in zip(batch, attempts, strict=True)}
        replies: list[str] = []
        forward, backward = engines(ctx, ROLE, prepared, replies.append)
        tg = textgrad()
        from textgrad.autograd.string_based_ops import StringBasedFunction

        system_prompt = tg.Variable(prompt, requires_grad=True, role_description=self.params.role_description)
        model = tg.BlackboxLLM(forward, system_prompt)
        optimizer = tg.TextualGradientDescent(engine=backward, parameters=[system_prompt],
                                              constraints=list(self.params.constraints),
                                              gradient_memory=self.params.gradient_memory)
        optimizer.gradient_memory_dict[system_prompt] = [{"value": g} for g in state.gradient_memory]
        optimizer.zero_grad()
        losses = []
        for t, a in zip(batch, attempts, strict=True):
            fb = graded(ctx, t, a)
            x = tg.Variable(query_of(a, t), requires_grad=False, role_description=QUERY_ROLE)
            y = tg.Variable(ctx.label(t), requires_grad=False, role_description=ANSWER_ROLE)
            response = model(x)
            value: int | str = int(fb.passed) if self.params.loss == "correct" else fb.message
            eval_fn = StringBasedFunction(partial(_constant, value), function_purpose=FN_PURPOSE)
            losses.append(eval_fn(inputs=dict(prediction=response, ground_truth_answer=y)))
        total_loss = tg.sum(losses)
        try:
            total_loss.backward(backward)
            system_prompt.gradients = in_batch_order(system_prompt, [query_of(a, t) for t, a in
                                                                     zip(batch, attempts, strict=True)])
            try:
                optimizer.step()
            except IndexError:  # TGD's parse found no opening tag
                ctx.reject("instruction", replies[-1] if replies else "", "no <IMPROVED_VARIABLE> span")
                return None
        except NoReply as err:
            ctx.log("textgrad_no_reply", {"reason": str(err)})
            return None
        kept = optimizer.gradient_memory_dict[system_prompt][-self.params.gradient_memory:]
        state.gradient_memory = [g["value"] for g in kept] if self.params.gradient_memory else []
        return str(system_prompt.value)

    def _validate(self, ctx: PracticeContext, current: str, proposed: str, state: TgdState) -> Manifest:
        """The example's `run_validation_revert` (or, without validation, the update as is)."""
        where = f"epoch {state.epoch} step {state.step}"
        if proposed != current:
            ctx.candidate(self._tree(ctx, proposed), intent=f"TextGrad {where}: the optimizer's new system prompt")
        if not self.params.run_validation:
            ctx.log("textgrad_step", {"epoch": state.epoch, "step": state.step, "val": None, "kept": True})
            state.prompt.append(proposed)
            ctx.harness.write("system.md", proposed)
            return Manifest(intent=f"TextGrad {where}: new system prompt", evidence="no validation run")
        val = self._val_accuracy(ctx, proposed)
        if not state.validation_acc:  # validation turned on in a resumed run: the kept prompt's accuracy first
            state.validation_acc.append(self._val_accuracy(ctx, current))
        previous = state.validation_acc[-1]
        kept = keeps(val, previous)
        ctx.log("textgrad_step", {"epoch": state.epoch, "step": state.step, "val": val, "previous": previous,
                                  "kept": kept})
        state.validation_acc.append(val if kept else previous)
        state.prompt.append(proposed if kept else current)
        if not kept:
            return Manifest(intent=f"TextGrad {where}: update reverted", evidence=f"val {val:.3f} < {previous:.3f}")
        ctx.harness.write("system.md", proposed)
        what = "new system prompt" if proposed != current else "the optimizer kept the prompt"
        return Manifest(intent=f"TextGrad {where}: {what}", evidence=f"val {previous:.3f} -> {val:.3f}")

    @classmethod
    def state_view(cls, tree: Mapping[str, str]) -> dict[str, Any]:
        state = read_state(tree)
        if state is None:
            return {}
        return {"epoch": state.epoch, "steps": len(state.prompt) - 1, "validation_acc": state.validation_acc}


def _constant(value: int | str, **inputs: Any) -> int | str:
    """The string-based function's value: the cell's grade of this prediction, already made."""
    return value


def in_batch_order(variable: Any, queries: Sequence[str]) -> list[Any]:
    """The prompt's gradients in batch order: textgrad keeps them in a set, whose order follows memory addresses,
    so the optimizer's prompt would change from run to run (and miss the response cache)."""
    def position(g: Any) -> tuple[int, str]:
        context = (variable.gradients_context.get(g) or {}).get("context", "")
        where = [i for i, q in enumerate(queries) if f"<LM_INPUT> {q} </LM_INPUT>" in str(context)]
        return (where[0] if where else len(queries), str(g.value))
    return sorted(variable.gradients, key=position)
