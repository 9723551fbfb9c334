"""`textgrad` (Yuksekgonul et al., 2024; code v0.1.6): TextGrad's prompt optimisation, written natively.

One practice step is one optimisation step of `evaluation/prompt_optimization.py`: a train batch answered with the
live prompt, a string-based loss per example (the cell's grade), the backward pass distributing critiques along the
graph loss → answer → prompt (`graph.py`), one TextualGradientDescent update per optimised variable, then validation
decides: the candidate is kept unless its val accuracy is strictly below the last kept one (the example's
`run_validation_revert`; a tie keeps). Variants: `pipeline: two_node` (a plan variable, `plan.md`, shown before the
task, then the answer prompt `system.md`; `update: final` optimises the answer prompt only, `both` the plan too) and
`feedback: errors` (the direct-rewrite baseline: the optimiser sees the failed conversations and the grader's message,
no backward pass). Each validated step records the right→wrong count (val items right under the parent prompt and
wrong under the candidate). State: `memory/textgrad/state.json`. Differences: docs/methods/textgrad.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from evoarena.api import Attempt, Method, PracticeContext, Reply, Rollout, TaskView, method
from evoarena.api.probe import Probe, ProbeExample, Verdict, judged, refused
from evoarena.harness import Manifest
from evoarena.harness.state import parse_state
from evoarena.methods.scoring import valset
from evoarena.methods.textgrad.graph import (
    RESPONSE_ROLE,
    Engine,
    Gradient,
    Request,
    Variable,
    backward,
    gradient_context,
    llm_call,
    parse_update,
    string_loss,
    update_request,
)
from evoarena.models import Message

STATE = "memory/textgrad/state.json"
PLAN = "plan.md"
ROLE = "proposer"
# The example's strings (evaluation/prompt_optimization.py, its training loop; the loss purpose as
# `textgrad.tasks.load_task` states it for string-based tasks): the roles of the query, the ground truth and the
# optimised system prompt.
PROMPT_ROLE = ("structured system prompt to a somewhat capable language model that specifies the behavior and "
               "strategies for the QA task")
QUERY_ROLE, ANSWER_ROLE = "query to the language model", "correct answer for the query"
FN_PURPOSE = "The runtime of string-based function that checks if the prediction is correct."
PLAN_ROLE = "plan the language model follows before it answers the query"
"""The plan variable's role description (the two-node pipeline; ours, as textgrad has no such example)."""
PLAN_SEED = "First work out what the question asks for, then find the quantities involved, then compute the answer."


PROBE_PROMPT = "You will answer a reasoning question. Think step by step."


def check_update(reply: Reply) -> Verdict:
    """A probe reply read as TGD's `step` reads it: the text between the tags, which must change the variable."""
    if reply.cut_off:
        return refused("update cut off at max_tokens")
    new = parse_update(reply.text)
    if new is None:
        return refused("no <IMPROVED_VARIABLE> span")
    return judged(bool(new) and new != PROBE_PROMPT, "the update repeats the variable")


def keeps(val: float, previous: float) -> bool:
    """`run_validation_revert`: the candidate stays unless its val accuracy is strictly below the last kept one."""
    return not val < previous


def right_to_wrong(parent: Mapping[str, bool], child: Mapping[str, bool]) -> tuple[int, int, int]:
    """(right→wrong, wrong→right, both graded): val items right under the parent and wrong under the child, the
    reverse, and how many items both were graded on."""
    both = [k for k in child if k in parent]
    return (sum(parent[k] and not child[k] for k in both), sum(child[k] and not parent[k] for k in both), len(both))


class NativeState(BaseModel):
    """The loader (this pass's shuffled train ids and the position in it), the updates made, the kept prompt's val
    accuracy after each step, and which val items it got right."""

    order: list[str] = []
    pos: int = 0
    updates: int = 0
    validation_acc: list[float] = []
    val_passed: dict[str, bool] = {}
    done: bool = False


def read_state(tree: Mapping[str, str]) -> NativeState | None:
    text = tree.get(STATE)
    return None if text is None else parse_state(STATE, text, NativeState)


def next_batch(state: NativeState, train: Sequence[TaskView], rng: Any, batch_size: int) -> list[TaskView]:
    """The next `batch_size` train tasks of a shuffled pass (`DataLoader(shuffle=True)`); a new permutation when the
    pass is spent. Mutates `state`."""
    by_id = {t.id: t for t in train}
    if state.pos >= len(state.order):
        state.order = [t.id for t in train]
        rng.shuffle(state.order)
        state.pos = 0
    ids = state.order[state.pos:state.pos + batch_size]
    state.pos += batch_size
    return [by_id[i] for i in ids if i in by_id]


def query_of(attempt: Attempt, task: TaskView) -> str:
    """What the solver was sent as the query: the attempt's last user message."""
    users = [m.content for m in attempt.messages if m.role == "user"]
    return users[-1] if users else task.prompt


@method("textgrad")
class TextGrad(Method):
    """TextGrad's prompt optimisation (native): backward pass along loss → answer → prompt, TGD update, val revert."""

    roles = ("solver", ROLE)

    class Params(Method.Params):
        batch_size: int = Field(3, ge=1, le=64, description="Train examples per step (the example's "
                                "`--batch_size`).")
        updates: int = Field(12, ge=1, le=1000, description="Candidate updates before the method stops (the "
                             "example's 3 epochs x 4 steps).")
        run_validation: bool = Field(True, description="Revert a candidate whose val accuracy is below the last "
                                     "kept one (`--run_validation`).")
        pipeline: Literal["single", "two_node"] = Field("single", description="`single`: the system prompt is the "
                                                        "one variable; `two_node`: a plan variable (plan.md) shown "
                                                        "before the task, then the answer prompt.")
        update: Literal["final", "both"] = Field("final", description="two_node only: optimise the answer prompt "
                                                 "(`final`) or the plan too (`both`).")
        feedback: Literal["backprop", "errors", "none"] = Field(
            "backprop", description="`backprop`: TextGrad's backward pass; `errors`: the direct-rewrite baseline (the "
            "optimiser sees the failed conversations and the grader's message); `none`: the equal-budget random "
            "prompt (the same update request with an empty context, validated the same way).")
        loss: Literal["correct", "message"] = Field("correct", description="The string-based loss: `correct` 1/0 "
                                                    "as `string_based_equality_fn`; `message` the grader's message.")
        plan: str = Field(PLAN_SEED, min_length=1, description="two_node: the plan variable's starting value.")
        vote_k: int = Field(0, ge=0, le=64, description="The equal-token vote baseline: k > 0 optimises nothing "
                            "and grades a majority vote of k samples of the frozen prompt on val (k: the report's "
                            "token-matched k); 0: off.")

    params: Params

    def probes(self, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
        """TGD's update request (its user message) with each example's conversation and feedback as a critique."""
        if not examples:
            return ()
        prompt = Variable(PROBE_PROMPT, PROMPT_ROLE, requires_grad=True)
        prompt.gradients = [Gradient(ex.feedback, PROBE_PROMPT, ex.task, ex.output.strip(), RESPONSE_ROLE,
                                     in_conversation=True) for ex in examples]
        return (Probe("update/all", ROLE, update_request(prompt, gradient_context(prompt))[1], check_update),)

    def initialize(self, ws: Any, system_prompt: str, solver_params: Any) -> None:
        super().initialize(ws, system_prompt, solver_params)
        if self.params.pipeline == "two_node":
            ws.write(PLAN, self.params.plan + "\n")

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        plan = tree.get(PLAN, "").strip()
        return f"Plan:\n{plan}" if plan else ""

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if ctx.attempt_limit is not None:  # the protocol counts submissions: submit once with the live harness
            ctx.solve(task)
        state = ctx.harness.load_state(STATE, NativeState, default=NativeState())
        if state.done:
            return None
        tree = ctx.harness.tree()
        if self.params.vote_k:
            state.done = True
            single, voted = self._vote(ctx, tree, self.params.vote_k)
            ctx.log("textgrad_native_vote", {"k": self.params.vote_k, "val_single": single, "val_vote": voted})
            ctx.harness.save_state(STATE, state)
            return Manifest(intent=f"TextGrad vote baseline: k={self.params.vote_k} on val",
                            evidence=f"val one sample {single:.3f}, vote {voted:.3f}")
        if self.params.run_validation and not state.validation_acc:
            acc, passed = self._validate(ctx, tree)
            state.validation_acc, state.val_passed = [acc], passed
            ctx.log("textgrad_native_seed", {"val": acc})
        batch = next_batch(state, ctx.train, ctx.rng, self.params.batch_size)
        state.updates += 1
        state.done = state.updates >= self.params.updates
        proposed = self._step(ctx, tree, batch) if batch else None
        manifest = self._decide(ctx, tree, proposed, state) if proposed is not None else None
        ctx.harness.save_state(STATE, state)
        return manifest or Manifest(intent=f"TextGrad update {state.updates}: no change")

    def _variables(self, tree: Mapping[str, str]) -> list[tuple[str, Variable]]:
        """The harness files that are variables, with whether each is optimised, in predecessor order."""
        out = [("system.md", Variable(tree.get("system.md", "").strip(), PROMPT_ROLE, requires_grad=True))]
        if self.params.pipeline == "two_node":
            out.append((PLAN, Variable(tree.get(PLAN, "").strip(), PLAN_ROLE,
                                       requires_grad=self.params.update == "both")))
        return out

    def _engine(self, ctx: PracticeContext) -> Engine:
        def answer(requests: Sequence[Request]) -> list[str | None]:
            if not requests:
                return []
            replies = ctx.chat_many(ROLE, [[Message("system", s), Message("user", u)] for s, u in requests])
            return [None if r is None else r.text for r in replies]
        return answer

    def _step(self, ctx: PracticeContext, tree: Mapping[str, str], batch: Sequence[TaskView]) -> dict[str, str] | None:
        """One optimisation step on `batch`: the new values of the optimised files, or None (no reply, no tags)."""
        variables = self._variables(tree)
        optimised = [(path, v) for path, v in variables if v.requires_grad]
        if self.params.feedback == "none":  # the random prompt: no batch, no feedback, the same update and validation
            return self._update(ctx, optimised)
        attempts = ctx.rollouts(batch, tree=tree)
        losses = []
        for t, a in zip(batch, attempts, strict=True):
            fb = (ctx.feedback(t, a) if not a.error else None)
            passed = bool(fb and fb.passed)
            message = fb.message if fb else "(no output: provider error)"
            query = Variable(query_of(a, t), QUERY_ROLE)
            response = llm_call(variables[0][1], [v for _, v in variables[1:]] + [query], query.value, a.text)
            if self.params.feedback == "errors":
                if not passed:  # the direct rewrite: the error itself, not a propagated critique
                    for _, v in optimised:
                        v.gradients.append(Gradient(message, variables[0][1].value, query.value, a.text,
                                                    RESPONSE_ROLE, in_conversation=True))
                continue
            truth = Variable(ctx.label(t), ANSWER_ROLE)
            value = str(int(passed)) if self.params.loss == "correct" else message
            losses.append(string_loss([("prediction", response), ("ground_truth_answer", truth)],
                                            FN_PURPOSE, value))
        if self.params.feedback == "backprop" and not backward(losses, self._engine(ctx)):
            ctx.log("textgrad_native_no_reply", {"reason": "no reply from the proposer role"})
            return None
        todo = [(p, v) for p, v in optimised if v.gradients]
        if not todo:
            return None
        for _, v in todo:  # backward runs the batch's last example first; the optimiser reads batch order
            if self.params.feedback == "backprop":
                v.gradients.reverse()
        return self._update(ctx, todo)

    def _update(self, ctx: PracticeContext, todo: Sequence[tuple[str, Variable]]) -> dict[str, str] | None:
        """One TGD request per variable (its critiques in context); the new values of those whose reply parsed."""
        replies = self._engine(ctx)([update_request(v, gradient_context(v)) for _, v in todo])
        new: dict[str, str] = {}
        for (path, _), reply in zip(todo, replies, strict=True):
            if reply is None:
                ctx.log("textgrad_native_no_reply", {"reason": f"no update reply for {path}"})
                return None
            parsed = parse_update(reply)
            if parsed is None:
                ctx.reject("instruction", reply, "no <IMPROVED_VARIABLE> span")
                continue
            new[path] = parsed
        return new or None

    def _validate(self, ctx: PracticeContext, tree: Mapping[str, str]) -> tuple[float, dict[str, bool]]:
        """`eval_dataset` on val: each val task once under `tree`; the mean grade and which items passed."""
        tasks = valset(ctx)
        attempts = ctx.rollouts(tasks, tree=tree)
        grades = {t.id: None if a.error else ctx.feedback(t, a) for t, a in zip(tasks, attempts, strict=True)}
        scores = [0.0 if g is None else g.score for g in grades.values()]
        return (sum(scores) / len(scores) if scores else 0.0), {k: bool(g and g.passed) for k, g in grades.items()}

    def _vote(self, ctx: PracticeContext, tree: Mapping[str, str], k: int) -> tuple[float, float]:
        """Val accuracy of one sample and of the majority vote over k samples (sample indices 0..k-1) of `tree`: the
        vote's grade is that of the first sample giving the most frequent parsed answer."""
        tasks = valset(ctx)
        attempts = ctx.rollouts([Rollout(t, tree=tree, sample_index=i) for t in tasks for i in range(k)])
        single = voted = 0.0
        for n, t in enumerate(tasks):
            group = [a for a in attempts[n * k:(n + 1) * k] if not a.error]
            if not group:
                continue
            single += ctx.feedback(t, attempts[n * k]).score if not attempts[n * k].error else 0.0
            answers = [a.answer for a in group if a.answer is not None]
            top = Counter(answers).most_common(1)[0][0] if answers else None
            chosen = next((a for a in group if a.answer == top), group[0])
            voted += ctx.feedback(t, chosen).score
        return (single / len(tasks), voted / len(tasks)) if tasks else (0.0, 0.0)

    def _decide(self, ctx: PracticeContext, tree: Mapping[str, str], proposed: Mapping[str, str],
                state: NativeState) -> Manifest:
        """Validation decides: the candidate is kept unless strictly worse on val than the last kept prompt."""
        where = f"update {state.updates}"
        child = {**tree, **{p: v + "\n" for p, v in proposed.items()}}
        changed = any(tree.get(p, "").strip() != v for p, v in proposed.items())
        if changed:
            ctx.candidate(child, intent=f"TextGrad {where}: {', '.join(sorted(proposed))}")
        record: dict[str, Any] = {"update": state.updates, "files": sorted(proposed), "changed": changed}
        if not self.params.run_validation:
            ctx.log("textgrad_native_step", {**record, "val": None, "kept": True})
            self._write(ctx, proposed)
            return Manifest(intent=f"TextGrad {where}: new variables", evidence="no validation run")
        val, passed = self._validate(ctx, child)
        previous = state.validation_acc[-1]
        r2w, w2r, graded = right_to_wrong(state.val_passed, passed)
        kept = keeps(val, previous)
        ctx.log("textgrad_native_step", {**record, "val": val, "previous": previous, "kept": kept,
                                         "right_to_wrong": r2w, "wrong_to_right": w2r, "graded": graded})
        state.validation_acc.append(val if kept else previous)
        if not kept:
            return Manifest(intent=f"TextGrad {where}: reverted", evidence=f"val {val:.3f} < {previous:.3f}")
        state.val_passed = passed
        self._write(ctx, proposed)
        return Manifest(intent=f"TextGrad {where}: kept", evidence=f"val {previous:.3f} -> {val:.3f}, "
                        f"right->wrong {r2w}/{graded}")

    @staticmethod
    def _write(ctx: PracticeContext, proposed: Mapping[str, str]) -> None:
        for path, value in proposed.items():
            ctx.harness.write(path, value + "\n")

    @classmethod
    def state_view(cls, tree: Mapping[str, str]) -> dict[str, Any]:
        state = read_state(tree)
        if state is None:
            return {}
        return {"updates": state.updates, "validation_acc": state.validation_acc}
