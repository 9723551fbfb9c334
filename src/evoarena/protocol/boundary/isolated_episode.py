"""An episode agent across the pipe to a method's own process (`protocol.isolation: process`). The cell keeps a
`RemoteAgent` that forwards `act`, `meta` and `end` and answers the child's requests from the episode's context
(`serve_episode`); the child's agent acts through a `PortEpisodeContext`, whose harness edits, step prompts, parses
and model calls all cross back to that context — the child holds the episode's view and nothing of the cell's."""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

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
from evoarena.models import GenParams, Message
from evoarena.protocol.boundary.channel import Caller
from evoarena.protocol.boundary.checked import as_int, as_list, as_text, gen_params
from evoarena.protocol.boundary.client import RoleClient
from evoarena.protocol.boundary.episode_wire import (
    AgentWireError,
    action_from_wire,
    action_to_wire,
    view_from_wire,
    view_to_wire,
)

Relay = Callable[[str, dict[str, Any]], Any]
Exchange = Callable[[tuple[Any, ...], Relay], Any]


class RemoteAgent(EpisodeAgent):
    """The cell's side of an agent living in the method's process (`exchange` is the method's pipe)."""

    def __init__(self, exchange: Exchange, agent_id: int, meta_actions: Sequence[str], method: str) -> None:
        self._exchange, self._id, self._method = exchange, agent_id, method
        self.meta_actions = tuple(meta_actions)

    def act(self, view: EpisodeView, ctx: EpisodeContext) -> AgentAction:
        value = self._exchange(("agent_act", self._id, view, ctx.sample_index), serve_episode(ctx, view.task))
        try:
            return action_from_wire(value)
        except AgentWireError as err:
            raise AgentWireError(f"{self._method}: {err}") from None

    def meta(self, name: str, argument: str, view: EpisodeView, ctx: EpisodeContext) -> str:
        value = self._exchange(("agent_meta", self._id, name, argument, view, ctx.sample_index),
                               serve_episode(ctx, view.task))
        if not isinstance(value, str):
            raise AgentWireError(f"{self._method}: meta-action {name!r} answered {type(value).__name__}, not text")
        return value

    def end(self, outcome: EpisodeEnd, ctx: EpisodeContext) -> None:
        self._exchange(("agent_end", self._id, outcome, ctx.sample_index), serve_episode(ctx, None))


def serve_episode(ctx: EpisodeContext, task: TaskView | None) -> Relay:
    """The answers to a child agent's requests, from the episode's context (`task`: the view's, for step prompts)."""

    def handle(op: str, args: dict[str, Any]) -> Any:
        if op == "ep_edit":
            ctx.edit(as_text(args.get("path")), as_text(args.get("text")))
            return None
        if op == "ep_solver_params":
            return ctx.solver_params
        if op == "ep_step_messages":
            if task is None:
                raise RuntimeError("no step is running: the episode has ended")
            return ctx.step_messages(view_from_wire(args.get("view"), task), note=as_text(args.get("note", "")))
        if op == "ep_parse":
            return ctx.parse(as_text(args.get("text")))
        if op == "ep_model":
            handle = ctx.model(as_text(args.get("role")))
            return {"model_name": handle.model_name, "default_params": handle.default_params,
                    "function_calling": handle.function_calling}
        if op == "complete":  # a RoleClient's call, as in a practice step
            messages = [Message.from_wire(m) for m in as_list(args.get("messages"))]
            params = args.get("params")
            return ctx.model(as_text(args.get("role"))).complete(
                messages, None if params is None else gen_params(params),
                sample_index=as_int(args.get("sample_index", 0)))
        raise ValueError(f"an episode agent cannot ask for {op!r}")

    return handle


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
            self._params = self._port.call("ep_solver_params")
        return self._params

    def edit(self, path: str, text: str) -> None:
        self._port.call("ep_edit", path=path, text=text)  # the cell refuses an escape (HarnessPathError here too)
        self._tree[str(check_relpath(path))] = text
        self._params = None

    def step_messages(self, view: EpisodeView, *, note: str = "") -> list[Message]:
        out: list[Message] = self._port.call("ep_step_messages", view=view_to_wire(view), note=note)
        return out

    def parse(self, text: str) -> Parsed:
        out: Parsed = self._port.call("ep_parse", text=text)
        return out

    def model(self, role: str) -> RoleClient:
        if role not in self._roles:
            info = self._port.call("ep_model", role=role)
            self._roles[role] = RoleClient(role, info["model_name"], info["default_params"], self._port,
                                           info["function_calling"])
        return self._roles[role]


class ChildAgents:
    """The method's process's side: the episode agents the method gave, by id, each with the context it acts
    through; `run` answers the cell's `episode_agent`, `agent_act`, `agent_meta` and `agent_end`."""

    COMMANDS = ("episode_agent", "agent_act", "agent_meta", "agent_end")

    def __init__(self, method: Method, port: Caller) -> None:
        self._method, self._port = method, port
        self._agents: dict[int, tuple[EpisodeAgent, PortEpisodeContext]] = {}
        self._next = 0

    def run(self, command: str, args: Sequence[Any]) -> Any:
        if command == "episode_agent":
            tree, task = args
            agent = self._method.episode_agent(tree, task)
            if agent is None:
                return None
            self._next += 1
            self._agents[self._next] = (agent, PortEpisodeContext(self._port, tree, 0))
            return {"id": self._next, "meta": [str(m) for m in agent.meta_actions]}
        agent_id, *rest, sample_index = args
        agent, ctx = self._agents[agent_id]
        ctx.sample_index = sample_index
        if command == "agent_act":
            (view,) = rest
            action = agent.act(view, ctx)
            if not isinstance(action, AgentAction):
                raise TypeError(f"{type(agent).__name__}.act returned {type(action).__name__}, not AgentAction")
            return action_to_wire(action)
        if command == "agent_meta":
            name, argument, view = rest
            return str(agent.meta(name, argument, view, ctx))
        if command == "agent_end":
            (outcome,) = rest
            try:
                agent.end(outcome, ctx)
            finally:
                del self._agents[agent_id]
            return None
        raise ValueError(f"unknown command {command!r}")
