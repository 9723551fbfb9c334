"""Solving an interactive task: one episode in the benchmark's environment. The actor is the method's episode agent
(`Method.episode_agent`: JitRL's reranker, BPE's meta-actions, a reset-free refiner…) or, when it has none, the
solver asked once per step with the harness's prompt (the method's `build_messages`, or a harness program in the
sandbox, which is also given the whole episode so far). Every call is in the ledger; the attempt's text is the
trajectory, its answer the outcome with the step-by-step trace (action, observation, score, admissible actions, the
calls behind it, what the agent noted), and an agent's harness edits come back as `Attempt.tree_after`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from evoarena.api import (
    AgentAction,
    Attempt,
    EpisodeAgent,
    EpisodeEnd,
    EpisodeView,
    InteractiveBenchmark,
    Method,
    TaskView,
    Turn,
    episode_answer,
)
from evoarena.envs.episode import Decision, MetaHandler, StepRecord, run_episode
from evoarena.harness import HarnessPathError
from evoarena.models import ModelCallError, RoleModel
from evoarena.protocol.solve.episode_context import EpisodeSession, SolverAgent
from evoarena.protocol.solve.harness_program import HarnessProgramError


class _Halted(Exception):
    """The episode cannot go on: a provider error after retries, a harness program's failure or an agent's refused
    harness edit."""

    def __init__(self, error: str | None = None, parse_error: str | None = None) -> None:
        super().__init__(error or parse_error)
        self.error, self.parse_error = error, parse_error


class _AgentActor:
    """`envs.episode.Actor` over an `EpisodeAgent`: each step's view built from the records, the agent asked, the
    calls it made and its notes kept per step; its meta-actions answered by the agent."""

    def __init__(self, agent: EpisodeAgent, session: EpisodeSession, benchmark: InteractiveBenchmark,
                 task: TaskView) -> None:
        self.agent, self.session, self.benchmark, self.task = agent, session, benchmark, task
        self.start = ""  # the episode's first observation
        self.view: EpisodeView | None = None
        self.call_ids: list[list[int | None]] = []  # the calls behind each step
        self.notes: list[Mapping[str, Any]] = []

    def decide(self, observation: str, history: Sequence[StepRecord], admissible: Sequence[str] | None) -> Decision:
        if not history:
            self.start = observation
        view = self.view = EpisodeView(
            self.task, len(history), observation, self.start,
            tuple(Turn(s.action, s.observation, s.kind) for s in history),
            tuple(admissible) if admissible is not None else None,
            self.benchmark.max_steps - len(history), history[-1].score if history else 0.0)
        self.session.start_step()
        action = _guarded(lambda: self.agent.act(view, self.session))
        if not isinstance(action, AgentAction):
            raise TypeError(f"{type(self.agent).__name__}.act returned {type(action).__name__}, not AgentAction")
        self.call_ids.append(list(self.session.calls))
        self.notes.append(dict(action.info))
        return Decision(action.action, dict(action.calls))

    def handlers(self) -> dict[str, MetaHandler]:
        def handler(name: str) -> MetaHandler:
            def answer(argument: str) -> str:
                assert self.view is not None
                view = self.view
                return str(_guarded(lambda: self.agent.meta(name, argument, view, self.session)))
            return answer
        return {name: handler(name) for name in self.agent.meta_actions}


T = TypeVar("T")


def _guarded(run: Callable[[], T]) -> T:
    """Run an agent hook, turning what ends the episode into `_Halted`."""
    try:
        return run()
    except ModelCallError as err:
        raise _Halted(error=str(err)) from None
    except HarnessProgramError as err:
        raise _Halted(parse_error=f"harness program: {err}") from None
    except HarnessPathError as err:
        raise _Halted(parse_error=f"harness edit refused: {err}") from None


def solve_episode(method: Method, benchmark: InteractiveBenchmark, tree: Mapping[str, str], task: TaskView,
                  solver: RoleModel, *, roles: Mapping[str, RoleModel] | None = None,
                  sample_index: int = 0) -> Attempt:
    """One episode of `task` with `tree` as the harness; a provider error ends it as an error (never scored).
    `roles`: the models an episode agent may call besides the solver."""
    env, seed = benchmark.episode(task)
    session = EpisodeSession(method, benchmark, tree, task, {**(roles or {}), "solver": solver}, sample_index)
    agent = method.episode_agent(tree, task) or SolverAgent()
    actor = _AgentActor(agent, session, benchmark, task)
    try:
        episode = run_episode(env, actor, seed=seed, max_steps=benchmark.max_steps, meta=actor.handlers())
        end = EpisodeEnd(tuple(episode.score_curve), episode.final_score, episode.max_score, episode.won,
                         episode.stopped, tuple(s.action for s in episode.steps), tuple(s.kind for s in episode.steps))
        _guarded(lambda: agent.end(end, session))
    except _Halted as halt:
        return Attempt(task.id, "", None, halt.parse_error, error=halt.error, messages=session.messages,
                       call_id=_last(actor.call_ids))
    finally:
        close = getattr(env, "close", None)
        if callable(close):  # a game process (TextWorld) ends with its episode
            close()
    transcript = "\n".join(f"> {s.action}\n{s.observation.strip()}" for s in episode.steps)
    trace = [_trace_step(s, calls, note) for s, calls, note in
             zip(episode.steps, actor.call_ids, actor.notes, strict=True)]
    answer = episode_answer(episode.final_score, episode.max_score, episode.won, len(episode.steps), episode.stopped,
                            trace)
    return Attempt(task.id, transcript, answer, messages=session.messages, call_id=_last(actor.call_ids),
                   tree_after=session.tree_after())


def _trace_step(s: StepRecord, calls: Sequence[int | None], note: Mapping[str, Any]) -> dict[str, Any]:
    step: dict[str, Any] = {
        "step": s.index, "kind": s.kind, "action": s.action, "observation": s.observation, "score": s.score,
        "done": s.done, "admissible": list(s.admissible) if s.admissible is not None else None,
        "call_id": calls[0] if calls else None}
    if len(calls) > 1:
        step["call_ids"] = list(calls)
    if s.calls:
        step["calls"] = dict(s.calls)  # harness calls by type, as the agent counted them
    if note:
        step["agent"] = dict(note)
    return step


def _last(call_ids: Sequence[Sequence[int | None]]) -> int | None:
    for calls in reversed(call_ids):
        if calls:
            return calls[-1]
    return None
