"""The practice context the runner hands a method (`api.PracticeContext`): its harness, its roles, train/val tasks
and a `channel.Port` to its cell. It holds no benchmark, store, grader or role model: each request crosses the
channel to the cell's `StepService`, as a copy (docs/security.md)."""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from evoarena.api import Attempt, Feedback, Reply, Rollout, TaskView
from evoarena.api.reply_check import REJECTION_KINDS
from evoarena.harness import HarnessWorkspace
from evoarena.models import Completion, GenParams, Message, ModelCallError, Tool
from evoarena.protocol.boundary.channel import Caller
from evoarena.protocol.boundary.ops import (
    AddCandidate,
    ChatMany,
    Complete,
    CompleteMany,
    Event,
    Grade,
    Label,
    MakeAttempt,
    Observe,
    Op,
    RolloutItem,
    Rollouts,
    StepArgs,
)

R = TypeVar("R")


@dataclass(frozen=True)
class RoleClient:
    """A role's model as a method sees it: its name, its default parameters, whether it takes tools and
    `complete`. No store, cache or backend: a call crosses the channel and is made, cached and ledgered on the
    cell's side."""

    role: str
    model_name: str
    default_params: GenParams
    _port: Caller
    function_calling: bool = False

    def complete(self, messages: Sequence[Message], params: GenParams | None = None, *,
                 sample_index: int = 0) -> Completion:
        """As `RoleModel.complete`; a provider error after retries raises `ModelCallError`."""
        return self._port.call(Complete(role=self.role, messages=tuple(messages), params=params,
                                        sample_index=sample_index))


class StepContext:
    """Handed to `Method.practice` for one step (implements `api.PracticeContext`). Every write goes through
    `harness`; every call through `ask` or `model(role)`; every submitted attempt through `solve`, every internal
    evaluation through `rollout` (both counted against the cell's budget)."""

    def __init__(
        self,
        *,
        port: Caller,
        harness: HarnessWorkspace,
        roles: Mapping[str, tuple[str, GenParams]],
        train: tuple[TaskView, ...],
        val: tuple[TaskView, ...],
        rng: random.Random,
        step: int,
        update_note: str | None = None,
        attempt_limit: int | None = None,
        function_calling: Collection[str] = (),
    ) -> None:
        """`function_calling`: the roles whose model takes tools."""
        self.harness = harness
        self.train = train
        self.val = val
        self.rng = rng
        self.step = step
        self.update_note = update_note
        self.attempt_limit = attempt_limit  # attempts allowed in this step (None: as the method likes)
        self._port = port
        self._roles = {role: RoleClient(role, name, params, port, role in function_calling)
                       for role, (name, params) in roles.items()}
        self._submitted = 0

    def model(self, role: str) -> RoleClient:
        if role not in self._roles:
            raise KeyError(f"role {role!r} is not mapped to a model in the spec (roles: {sorted(self._roles)})")
        return self._roles[role]

    def ask(
        self,
        role: str,
        prompt: str,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: tuple[str, ...] | None = None,
        sample_index: int = 0,
        note: bool = True,
        reject_cut_off: str | None = None,
    ) -> Reply | None:
        """See `api.PracticeContext.ask`: the update note in front, provider errors as None, cut-offs rejected."""
        if note and self.update_note:
            prompt = f"{self.update_note.strip()}\n\n{prompt}"
        model = self.model(role)
        params = _overridden(model.default_params, max_tokens, temperature, stop)
        try:
            out = model.complete([Message("user", prompt)], params, sample_index=sample_index)
        except ModelCallError:
            return None
        return _as_reply(self, out, params, reject_cut_off)

    def ask_many(
        self,
        role: str,
        prompts: Sequence[str],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: tuple[str, ...] | None = None,
        sample_indices: Sequence[int] | None = None,
        note: bool = True,
        reject_cut_off: str | None = None,
    ) -> list[Reply | None]:
        """See `api.PracticeContext.ask_many`: one request to the cell, whose scheduler makes the calls concurrently."""
        indices = list(sample_indices) if sample_indices is not None else [0] * len(prompts)
        if len(indices) != len(prompts):
            raise ValueError(f"ask_many: {len(prompts)} prompts but {len(indices)} sample indices")
        if note and self.update_note:
            prompts = [f"{self.update_note.strip()}\n\n{p}" for p in prompts]
        params = _overridden(self.model(role).default_params, max_tokens, temperature, stop)
        outs = self._port.call(CompleteMany(role=role, prompts=tuple(prompts), params=params,
                                            sample_indices=tuple(indices)))
        return [None if out is None else _as_reply(self, out, params, reject_cut_off) for out in outs]

    def chat_many(
        self,
        role: str,
        conversations: Sequence[Sequence[Message]],
        *,
        tools: Sequence[Tool] = (),
        tool_choice: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        sample_indices: Sequence[int] | None = None,
        note: bool = True,
        reject_cut_off: str | None = None,
    ) -> list[Reply | None]:
        """See `api.PracticeContext.chat_many`: one request to the cell, whose scheduler makes the calls
        concurrently; messages and tools cross as plain JSON values."""
        indices = list(sample_indices) if sample_indices is not None else [0] * len(conversations)
        if len(indices) != len(conversations):
            raise ValueError(f"chat_many: {len(conversations)} conversations but {len(indices)} sample indices")
        if note and self.update_note:
            conversations = [_noted(c, self.update_note) for c in conversations]
        params = replace(_overridden(self.model(role).default_params, max_tokens, temperature, None),
                         tools=tuple(tools), tool_choice=tool_choice)
        outs = self._port.call(ChatMany(role=role, conversations=tuple(tuple(c) for c in conversations),
                                        params=params, sample_indices=tuple(indices)))
        return [None if out is None else _as_reply(self, out, params, reject_cut_off) for out in outs]

    def solve(self, task: TaskView, *, tree: Mapping[str, str] | None = None, sample_index: int = 0) -> Attempt:
        """One submitted attempt with the current harness (or `tree`): counted against the step's
        `attempt_limit` and recorded as a practice row; under the curriculum protocol it decides the stage."""
        attempt = self._attempt(task, tree, sample_index, submit=True)
        self._submitted += 1
        return attempt

    def rollout(self, task: TaskView, *, tree: Mapping[str, str] | None = None, sample_index: int = 0) -> Attempt:
        """One internal evaluation (GEPA's minibatch and val scores, EvoSkill's validation, a GRPO group's other
        samples, ACE's re-generation): graded like the step's current attempt but never submitted, so it does
        not use up `attempt_limit` nor decide a stage. It still counts against the cell's budget."""
        return self._attempt(task, tree, sample_index, submit=False)

    def rollouts(self, items: Sequence[TaskView | Rollout], *, tree: Mapping[str, str] | None = None) -> list[Attempt]:
        """See `api.PracticeContext.rollouts`: one request to the cell, whose scheduler runs them concurrently."""
        wanted = [it if isinstance(it, Rollout) else Rollout(it, tree) for it in items]
        return self._port.call(Rollouts(items=tuple(
            RolloutItem(task_id=r.task.id, tree=_tree(r.tree), sample_index=r.sample_index) for r in wanted)))

    @property
    def submitted(self) -> int:
        """Submitted attempts so far in this step."""
        return self._submitted

    def _attempt(self, task: TaskView, tree: Mapping[str, str] | None, sample_index: int, *, submit: bool) -> Attempt:
        """The cell numbers the attempt, enforces the step's limit and reads the harness when `tree` is None."""
        return self._port.call(MakeAttempt(task_id=task.id, tree=_tree(tree), sample_index=sample_index,
                                           submit=submit))

    def feedback(self, task: TaskView, attempt: Attempt) -> Feedback:
        """Grader feedback for a train/val attempt. A provider error is not feedback: it raises."""
        if attempt.error:
            raise RuntimeError(f"attempt on {task.id} had a provider error; it cannot be graded")
        return self._port.call(Grade(task_id=task.id, answer=attempt.answer, number=attempt.number))

    def observation(self, task: TaskView, attempt: Attempt) -> str | None:
        """The execution output of a train/val attempt (`Benchmark.observation`); None where answers are only
        graded or the attempt had a provider error."""
        if attempt.error:
            return None
        return self._port.call(Observe(task_id=task.id, answer=attempt.answer, number=attempt.number))

    def label(self, task: TaskView) -> str:
        """The reference answer of a train task (as DSPy's labeled demos use). Val and test are refused."""
        return self._port.call(Label(task_id=task.id))

    def reject(
        self, what: str, raw: str, reason: str, *, part: bool = False, role: str | None = None,
        kind: str = "malformed",
    ) -> None:
        """See `api.PracticeContext.reject`: the cell adds the role of the step's last model call unless `role`
        names it."""
        if kind not in REJECTION_KINDS:
            raise ValueError(f"ctx.reject: kind {kind!r} is not one of {', '.join(REJECTION_KINDS)}")
        payload: dict[str, Any] = {"what": what, "reason": reason, "raw": raw[:4000], "kind": kind, "part": part}
        if role is not None:
            payload["role"] = role
        self._port.call(Event(kind="rejected_output", payload=payload))

    def log(self, kind: str, payload: dict[str, Any]) -> None:
        """An event in the run's log, stored as the method's; a kind the runner writes is refused by the cell."""
        self._port.call(Event(kind=kind, payload=payload))

    def candidate(self, tree: Mapping[str, str], *, parents: Sequence[str] = (), intent: str = "",
                  evidence: str = "") -> str:
        """Keep `tree` as a candidate of this step (saved as a version with the step); its content address."""
        return self._port.call(AddCandidate(tree=dict(tree), parents=tuple(parents), intent=intent,
                                            evidence=evidence))


def step_args(ctx: StepContext) -> StepArgs:
    """What a method's own process needs to rebuild `ctx` (everything but the channel, which it has)."""
    return StepArgs(train=tuple(ctx.train), val=tuple(ctx.val), rng=ctx.rng.getstate(), step=ctx.step,
                    update_note=ctx.update_note, attempt_limit=ctx.attempt_limit,
                    roles={role: (m.model_name, m.default_params) for role, m in ctx._roles.items()},
                    function_calling=tuple(role for role, m in ctx._roles.items() if m.function_calling))


def rebuilt(step: StepArgs, port: Caller, harness: HarnessWorkspace) -> StepContext:
    """`step_args`' context again, in a method's own process, over `port`."""
    rng = random.Random()
    rng.setstate(step.rng)
    return StepContext(port=port, harness=harness, roles=step.roles, train=step.train, val=step.val, rng=rng,
                       step=step.step, update_note=step.update_note, attempt_limit=step.attempt_limit,
                       function_calling=step.function_calling)


def relay(ctx: StepContext, op: Op[R]) -> R:
    """Forward a request from a method's own process to the cell, through this context's channel."""
    return ctx._port.call(op)


def _tree(tree: Mapping[str, str] | None) -> dict[str, str] | None:
    return None if tree is None else dict(tree)


def _as_reply(ctx: Any, out: Completion, params: GenParams, reject_cut_off: str | None) -> Reply | None:
    """A completion as `ask` returns it: a cut-off reply rejected (through `ctx.reject`) when asked to."""
    reply = Reply(out.text, out.finish_reason, getattr(out, "call_id", None), tuple(getattr(out, "tool_calls", ())))
    if reject_cut_off is not None and reply.cut_off:
        ctx.reject(reject_cut_off, reply.text, f"{reject_cut_off} cut off at max_tokens={params.max_tokens}")
        return None
    return reply


def _noted(conversation: Sequence[Message], note: str) -> list[Message]:
    """The conversation with the update note in front of its first user message (as `ask` puts it in front of the
    prompt), so every turn of it shows the note in the same place."""
    out, noted = [], False
    for m in conversation:
        if m.role == "user" and not noted:
            m, noted = replace(m, content=f"{note.strip()}\n\n{m.content}"), True
        out.append(m)
    return out


def _overridden(params: GenParams, max_tokens: int | None, temperature: float | None,
                stop: tuple[str, ...] | None) -> GenParams:
    overrides: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature, "stop": stop}
    return replace(params, **{k: v for k, v in overrides.items() if v is not None})
