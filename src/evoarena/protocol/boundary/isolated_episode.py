"""An episode agent across the pipe to a method's own process (`protocol.isolation: process`). The cell keeps a
`RemoteAgent` that forwards `act`, `meta` and `end` and answers the child's requests from the episode's context
(`EpisodeServer`); the child's agent acts through a `PortEpisodeContext`, whose harness edits, step prompts, parses
and model calls all cross back to that context — the child holds the episode's view and nothing of the cell's."""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from typing import Protocol, TypeVar

from evoarena.api import (
    AgentAction,
    EpisodeAgent,
    EpisodeContext,
    EpisodeEnd,
    EpisodeView,
    Method,
    Parsed,
    TaskView,
)
from evoarena.harness.paths import check_relpath
from evoarena.models import Completion, GenParams, Message
from evoarena.protocol.boundary.channel import Answer, Caller
from evoarena.protocol.boundary.client import RoleClient
from evoarena.protocol.boundary.ops import (
    AgentAct,
    AgentEnd,
    AgentMeta,
    AgentRef,
    Complete,
    EpisodeEdit,
    EpisodeModel,
    EpisodeParse,
    EpisodeSolverParams,
    EpisodeStepMessages,
    Op,
    OpenAgent,
    RoleInfo,
    Server,
    StepView,
    handles,
)

R = TypeVar("R")


class Exchange(Protocol):
    """A command to the method's process, the child's requests meanwhile answered by `answer`."""

    def __call__(self, command: Op[R], answer: Answer | None) -> R: ...


class RemoteAgent(EpisodeAgent):
    """The cell's side of an agent living in the method's process (`exchange` is the method's pipe)."""

    def __init__(self, exchange: Exchange, agent_id: int, meta_actions: Sequence[str]) -> None:
        self._exchange, self._id = exchange, agent_id
        self.meta_actions = tuple(meta_actions)

    def act(self, view: EpisodeView, ctx: EpisodeContext) -> AgentAction:
        return self._exchange(AgentAct(agent=self._id, view=view, sample_index=ctx.sample_index),
                              EpisodeServer(ctx, view.task).answer)

    def meta(self, name: str, argument: str, view: EpisodeView, ctx: EpisodeContext) -> str:
        return self._exchange(AgentMeta(agent=self._id, name=name, argument=argument, view=view,
                                        sample_index=ctx.sample_index), EpisodeServer(ctx, view.task).answer)

    def end(self, outcome: EpisodeEnd, ctx: EpisodeContext) -> None:
        self._exchange(AgentEnd(agent=self._id, outcome=outcome, sample_index=ctx.sample_index),
                       EpisodeServer(ctx, None).answer)


class EpisodeServer(Server):
    """The answers to a child agent's requests, from the episode's context (`task`: the view's, for step prompts)."""

    def __init__(self, ctx: EpisodeContext, task: TaskView | None) -> None:
        self._ctx, self._task = ctx, task

    @handles(EpisodeEdit)
    def _edit(self, op: EpisodeEdit) -> None:
        self._ctx.edit(op.path, op.text)

    @handles(EpisodeSolverParams)
    def _solver_params(self, op: EpisodeSolverParams) -> GenParams:
        return self._ctx.solver_params

    @handles(EpisodeStepMessages)
    def _step_messages(self, op: EpisodeStepMessages) -> list[Message]:
        if self._task is None:
            raise RuntimeError("no step is running: the episode has ended")
        return self._ctx.step_messages(op.view.view(self._task), note=op.note)

    @handles(EpisodeParse)
    def _parse(self, op: EpisodeParse) -> Parsed:
        return self._ctx.parse(op.text)

    @handles(EpisodeModel)
    def _model(self, op: EpisodeModel) -> RoleInfo:
        handle = self._ctx.model(op.role)
        return RoleInfo(model_name=handle.model_name, default_params=handle.default_params,
                        function_calling=handle.function_calling)

    @handles(Complete)
    def _complete(self, op: Complete) -> Completion:
        """A `RoleClient`'s call, as in a practice step."""
        return self._ctx.model(op.role).complete(list(op.messages), op.params, sample_index=op.sample_index)


class PortEpisodeContext:
    """The child's `EpisodeContext`: the harness as this episode has it (a copy kept in step with every edit the cell
    accepted), everything else asked of the cell. A role's handle and the solver parameters are asked once (the
    parameters again after an edit, which may change harness.toml), not at every step."""

    def __init__(self, port: Caller, tree: Mapping[str, str], sample_index: int) -> None:
        self._port, self._tree, self.sample_index = port, dict(tree), sample_index
        self._roles: dict[str, RoleClient] = {}
        self._params: GenParams | None = None

    @property
    def tree(self) -> Mapping[str, str]:
        return types.MappingProxyType(self._tree)

    @property
    def solver_params(self) -> GenParams:
        if self._params is None:
            self._params = self._port.call(EpisodeSolverParams())
        return self._params

    def edit(self, path: str, text: str) -> None:
        self._port.call(EpisodeEdit(path=path, text=text))  # the cell refuses an escape (HarnessPathError here too)
        self._tree[str(check_relpath(path))] = text
        self._params = None

    def step_messages(self, view: EpisodeView, *, note: str = "") -> list[Message]:
        return self._port.call(EpisodeStepMessages(view=StepView.of(view), note=note))

    def parse(self, text: str) -> Parsed:
        return self._port.call(EpisodeParse(text=text))

    def model(self, role: str) -> RoleClient:
        if role not in self._roles:
            info = self._port.call(EpisodeModel(role=role))
            self._roles[role] = RoleClient(role, info.model_name, info.default_params, self._port,
                                           info.function_calling)
        return self._roles[role]


class ChildAgents(Server):
    """The method's process's side: the episode agents the method gave, by id, each with the context it acts
    through; it answers the cell's `OpenAgent`, `AgentAct`, `AgentMeta` and `AgentEnd`."""

    def __init__(self, method: Method, port: Caller) -> None:
        self._method, self._port = method, port
        self._agents: dict[int, tuple[EpisodeAgent, PortEpisodeContext]] = {}
        self._next = 0

    @handles(OpenAgent)
    def _open(self, op: OpenAgent) -> AgentRef | None:
        agent = self._method.episode_agent(op.tree, op.task)
        if agent is None:
            return None
        self._next += 1
        self._agents[self._next] = (agent, PortEpisodeContext(self._port, op.tree, 0))
        return AgentRef(id=self._next, meta=tuple(str(m) for m in agent.meta_actions))

    def _agent(self, agent_id: int, sample_index: int) -> tuple[EpisodeAgent, PortEpisodeContext]:
        agent, ctx = self._agents[agent_id]
        ctx.sample_index = sample_index
        return agent, ctx

    @handles(AgentAct)
    def _act(self, op: AgentAct) -> AgentAction:
        agent, ctx = self._agent(op.agent, op.sample_index)
        action = agent.act(op.view, ctx)
        if not isinstance(action, AgentAction):
            raise TypeError(f"{type(agent).__name__}.act returned {type(action).__name__}, not AgentAction")
        return action

    @handles(AgentMeta)
    def _meta(self, op: AgentMeta) -> str:
        agent, ctx = self._agent(op.agent, op.sample_index)
        return str(agent.meta(op.name, op.argument, op.view, ctx))

    @handles(AgentEnd)
    def _end(self, op: AgentEnd) -> None:
        agent, ctx = self._agent(op.agent, op.sample_index)
        try:
            agent.end(op.outcome, ctx)
        finally:
            del self._agents[op.agent]
