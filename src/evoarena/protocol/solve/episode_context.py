"""The protocol's side of an episode agent: the `EpisodeContext` it acts through (an in-memory harness it may edit
inside the harness root, the harness's own step prompt, the benchmark's parse, the roles' models behind handles that
record every call's ledger id and hold no store), and the plain solver agent used when a method has none."""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from typing import Any

from evoarena.api import (
    AgentAction,
    EpisodeAgent,
    EpisodeContext,
    EpisodeView,
    InteractiveBenchmark,
    Method,
    Parsed,
    TaskView,
)
from evoarena.harness.paths import check_relpath
from evoarena.models import Completion, GenParams, Message, RoleModel
from evoarena.protocol.solve.solver_prompt import harness_messages, solver_params


class _Handle:
    """A role's model as an episode agent sees it (`api.RoleHandle`): the call, and nothing of the ledger's store."""

    def __init__(self, model: RoleModel, record: list[int | None], role: str) -> None:
        self._model, self._record, self._role = model, record, role

    @property
    def role(self) -> str:
        return self._role

    @property
    def model_name(self) -> str:
        return self._model.model_name

    @property
    def default_params(self) -> GenParams:
        return self._model.default_params

    @property
    def function_calling(self) -> bool:
        return self._model.function_calling

    def complete(self, messages: Sequence[Message], params: GenParams | None = None, *,
                 sample_index: int = 0) -> Completion:
        completion = self._model.complete(messages, params, sample_index=sample_index)
        self._record.append(getattr(completion, "call_id", None))
        return completion


class EpisodeSession:
    """One attempt's `EpisodeContext`. `calls` holds the ledger ids of the calls made since `start_step`, `messages`
    the last step prompt built; `edited` the harness files the agent changed."""

    def __init__(self, method: Method, benchmark: InteractiveBenchmark, tree: Mapping[str, str], task: TaskView,
                 roles: Mapping[str, RoleModel], sample_index: int) -> None:
        self._method, self._benchmark, self._task = method, benchmark, task
        self._tree: dict[str, str] = dict(tree)
        self._roles = dict(roles)
        self._sample_index = sample_index
        self.edited: set[str] = set()
        self.calls: list[int | None] = []
        self.messages: tuple[Message, ...] = ()

    @property
    def tree(self) -> Mapping[str, str]:
        return types.MappingProxyType(self._tree)

    @property
    def solver_params(self) -> GenParams:
        return solver_params(self._benchmark, self._tree)

    @property
    def sample_index(self) -> int:
        return self._sample_index

    def edit(self, path: str, text: str) -> None:
        rel = str(check_relpath(path))  # HarnessPathError for an escape, as a workspace write would refuse it
        if not isinstance(text, str):
            raise TypeError(f"harness edit {rel!r}: text expected, got {type(text).__name__}")
        self._tree[rel] = text
        self.edited.add(rel)

    def tree_after(self) -> dict[str, str] | None:
        """The edited harness, or None when the agent changed nothing."""
        return dict(self._tree) if self.edited else None

    def step_messages(self, view: EpisodeView, *, note: str = "") -> list[Message]:
        text = self._benchmark.format_step(view.task, view.observation, view.history, view.admissible,
                                           view.steps_left, start=view.start)
        if note.strip():
            text = f"{note.strip()}\n\n{text}"
        episode: dict[str, Any] = {
            "start": view.start, "observation": view.observation, "steps_left": view.steps_left,
            "history": [{"action": t.action, "observation": t.observation, "kind": t.kind} for t in view.history]}
        self.messages = harness_messages(self._method, self._tree, text, self._task, episode=episode)
        return list(self.messages)

    def parse(self, text: str) -> Parsed:
        return self._benchmark.parse(text)

    def model(self, role: str) -> _Handle:
        if role not in self._roles:
            raise KeyError(f"no model for role {role!r} in this episode (mapped: {', '.join(sorted(self._roles))})")
        return _Handle(self._roles[role], self.calls, role)

    def start_step(self) -> None:
        self.calls = []


class SolverAgent(EpisodeAgent):
    """The plain actor: the harness's step prompt, one solver call, the action parsed from the reply."""

    def act(self, view: EpisodeView, ctx: EpisodeContext) -> AgentAction:
        completion = ctx.model("solver").complete(ctx.step_messages(view), ctx.solver_params,
                                                  sample_index=ctx.sample_index)
        parsed = ctx.parse(completion.text)
        return AgentAction(parsed.answer or "", {"solver": 1})
