"""What a method programs against during one practice step: the `PracticeContext` protocol and its replies."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from evoarena.api.attempt import Attempt
from evoarena.api.task import Feedback, TaskView
from evoarena.harness import HarnessWorkspace
from evoarena.models import Completion, GenParams, Message, Tool, ToolCall


class BudgetExhausted(RuntimeError):
    """Raised by a `PracticeContext` call (or an attempt) that would go past the cell's budget; a method that runs a
    library's loop catches it to keep its best-so-far."""


@dataclass(frozen=True)
class Reply:
    """A role's answer to `ctx.ask`: its text and why it stopped (`length`: cut off at max_tokens); for
    `ctx.chat_many` with tools, also the tool calls it made (their arguments as the model wrote them)."""

    text: str
    finish_reason: str | None = None
    call_id: int | None = None
    tool_calls: tuple[ToolCall, ...] = ()

    @property
    def cut_off(self) -> bool:
        return self.finish_reason == "length"


@dataclass(frozen=True)
class Rollout:
    """One internal evaluation for `PracticeContext.rollouts`: a task, the harness tree to run it with (None: the
    current harness, or the call's `tree`) and the sample index (its own seed, as for a group of samples)."""

    task: TaskView
    tree: Mapping[str, str] | None = None
    sample_index: int = 0


class RoleHandle(Protocol):
    """A role's model as a method sees it: no store, cache or backend (the call is made and ledgered by the cell)."""

    @property
    def role(self) -> str: ...

    @property
    def model_name(self) -> str: ...

    @property
    def default_params(self) -> GenParams: ...

    @property
    def function_calling(self) -> bool:
        """Whether the model takes tools (`GenParams.tools`, `ctx.chat_many(tools=...)`): an openai model whose spec
        says its server offers function calling, or a scripted policy that calls tools."""
        ...

    def complete(self, messages: Sequence[Message], params: GenParams | None = None, *,
                 sample_index: int = 0) -> Completion:
        """One call; a provider error after retries raises `ModelCallError`."""
        ...


class PracticeContext(Protocol):
    """Handed to `Method.practice` for one step. Every write goes through `harness`; every call through `ask` or
    `model(role)`; every submitted attempt through `solve`, every internal evaluation through `rollout` (both
    counted against the cell's budget). It holds train/val tasks only: no test task, no benchmark, no run store."""

    harness: HarnessWorkspace
    train: tuple[TaskView, ...]
    val: tuple[TaskView, ...]
    rng: random.Random
    step: int
    update_note: str | None
    attempt_limit: int | None

    @property
    def submitted(self) -> int:
        """Submitted attempts so far in this step."""
        ...

    def model(self, role: str) -> RoleHandle:
        """The model mapped to `role` (KeyError naming the mapped roles otherwise)."""
        ...

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
        """One user-message call in `role`: the update note in front (unless `note=False`), the role's default
        params with the given overrides. None on a provider error (recorded in the ledger; the runner decides the
        step's fate). With `reject_cut_off=WHAT`, a reply cut off at max_tokens is recorded as a rejected WHAT and
        None is returned."""
        ...

    def solve(self, task: TaskView, *, tree: Mapping[str, str] | None = None, sample_index: int = 0) -> Attempt:
        """One submitted attempt with the current harness (or `tree`)."""
        ...

    def rollout(self, task: TaskView, *, tree: Mapping[str, str] | None = None, sample_index: int = 0) -> Attempt:
        """One internal evaluation, graded like a submission but never submitted."""
        ...

    def rollouts(self, items: Sequence[TaskView | Rollout], *, tree: Mapping[str, str] | None = None) -> list[Attempt]:
        """Several internal evaluations at once (a minibatch, a group of samples, candidates side by side): the run's
        scheduler runs them concurrently, and the attempts come back in the order given, exactly as
        `[rollout(...) for ...]` would return them. `tree` is the harness of the items given as bare tasks."""
        ...

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
        """Independent `ask`s in `role`, run concurrently; replies in prompt order, each as `ask` would return it."""
        ...

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
        """Independent multi-message calls in `role`, run concurrently, as `ask_many` (the update note in front of
        each conversation's first user message unless `note=False`): a conversation may hold an assistant's tool
        calls and `tool` messages answering them, and `tools` (with `tool_choice`) are offered to a model that takes
        them (`model(role).function_calling`; a call with tools to one that does not is refused with a clear
        error). Replies in order, with the tool calls the model made."""
        ...

    def feedback(self, task: TaskView, attempt: Attempt) -> Feedback:
        """Grader feedback for a train/val attempt; a provider error raises."""
        ...

    def observation(self, task: TaskView, attempt: Attempt) -> str | None:
        """What running the answer showed (None where answers are only graded)."""
        ...

    def label(self, task: TaskView) -> str:
        """The reference answer of a train task; val and test are refused."""
        ...

    def reject(
        self, what: str, raw: str, reason: str, *, part: bool = False, role: str | None = None,
        kind: str = "malformed",
    ) -> None:
        """Record malformed model output that the method refused to adopt. `part`: only a part of a reply (an
        operation, a change, a tool call) is refused, the rest may be kept. The event names the role of the step's
        last model call; `role` names it instead where the reply came from elsewhere (an episode's calls). `kind`:
        `malformed` (the parser refused it) or the shared check's flaw (`reply_check.FLAW_KINDS`)."""
        ...

    def log(self, kind: str, payload: dict[str, Any]) -> None:
        """An event in the run's log, tied to this step and stored as the method's. The kinds the runner writes
        (`run_started`, `run_finished`, `probes`, `method_isolation`, `budget_exhausted`, …) raise ValueError."""
        ...

    def candidate(self, tree: Mapping[str, str], *, parents: Sequence[str] = (), intent: str = "",
                  evidence: str = "") -> str:
        """Keep a candidate harness the method is searching over (not the live one) in the run's archive of versions,
        with the candidates it came from (their ids); returns its version id — the content address that rollouts on
        `tree` are recorded under, so the archive has every candidate's results. Saved with the step's unit."""
        ...
