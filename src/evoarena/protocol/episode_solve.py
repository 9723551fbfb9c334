"""Solving an interactive task: one episode in the benchmark's environment, the solver asked once per step with the
harness's prompt (the method's `build_messages`, or a harness program in the sandbox) around the benchmark's view of
the step (a harness program is also given the whole episode so far: `episode`). Every step's call is in the
ledger; the attempt's text is the trajectory, its answer the outcome with the step-by-step trace (action,
observation, score, admissible actions, the call behind it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evoarena.api import Attempt, InteractiveBenchmark, Method, TaskView, Turn, episode_answer
from evoarena.envs.episode import Decision, StepRecord, run_episode
from evoarena.models import Message, ModelCallError, RoleModel
from evoarena.protocol.harness_program import HarnessProgramError
from evoarena.protocol.solver_prompt import harness_messages, solver_params


class _Halted(Exception):
    """The solver could not be called (a provider error after retries, or a harness program's failure)."""

    def __init__(self, error: str | None = None, parse_error: str | None = None) -> None:
        super().__init__(error or parse_error)
        self.error, self.parse_error = error, parse_error


class _SolverActor:
    """The solver as the episode's actor: each step's prompt, one call, the action parsed from the reply."""

    def __init__(self, method: Method, benchmark: InteractiveBenchmark, tree: Mapping[str, str], task: TaskView,
                 solver: RoleModel, sample_index: int) -> None:
        self.method, self.benchmark, self.tree, self.task = method, benchmark, tree, task
        self.solver, self.sample_index = solver, sample_index
        self.params = solver_params(benchmark, tree)
        self.messages: tuple[Message, ...] = ()
        self.call_id: int | None = None
        self.call_ids: list[int | None] = []  # the solver call behind each step
        self.start = ""  # the episode's first observation

    def decide(self, observation: str, history: Sequence[StepRecord], admissible: Sequence[str] | None) -> Decision:
        turns = [Turn(s.action, s.observation) for s in history]
        steps_left = self.benchmark.max_steps - len(history)
        if not history:
            self.start = observation
        text = self.benchmark.format_step(self.task, observation, turns, admissible, steps_left, start=self.start)
        episode = {"start": self.start, "history": [{"action": t.action, "observation": t.observation} for t in turns],
                   "observation": observation, "steps_left": steps_left}
        try:
            self.messages = harness_messages(self.method, self.tree, text, self.task, episode=episode)
        except HarnessProgramError as err:
            raise _Halted(parse_error=f"harness program: {err}") from None
        try:
            completion = self.solver.complete(self.messages, self.params, sample_index=self.sample_index)
        except ModelCallError as err:
            raise _Halted(error=str(err)) from None
        self.call_id = getattr(completion, "call_id", None)
        self.call_ids.append(self.call_id)
        parsed = self.benchmark.parse(completion.text)
        return Decision(parsed.answer or "", {"solver": 1})


def solve_episode(method: Method, benchmark: InteractiveBenchmark, tree: Mapping[str, str], task: TaskView,
                  solver: RoleModel, *, sample_index: int = 0) -> Attempt:
    """One episode of `task` with `tree` as the harness; a provider error ends it as an error (never scored)."""
    env, seed = benchmark.episode(task)
    actor = _SolverActor(method, benchmark, tree, task, solver, sample_index)
    try:
        episode = run_episode(env, actor, seed=seed, max_steps=benchmark.max_steps)
    except _Halted as halt:
        return Attempt(task.id, "", None, halt.parse_error, error=halt.error, messages=actor.messages,
                       call_id=actor.call_id)
    finally:
        close = getattr(env, "close", None)
        if callable(close):  # a game process (TextWorld) ends with its episode
            close()
    transcript = "\n".join(f"> {s.action}\n{s.observation.strip()}" for s in episode.steps)
    trace = [{"step": s.index, "kind": s.kind, "action": s.action, "observation": s.observation, "score": s.score,
              "done": s.done, "admissible": list(s.admissible) if s.admissible is not None else None,
              "call_id": call_id} for s, call_id in zip(episode.steps, actor.call_ids, strict=True)]
    answer = episode_answer(episode.final_score, episode.max_score, episode.won, len(episode.steps), episode.stopped,
                            trace)
    return Attempt(task.id, transcript, answer, messages=actor.messages, call_id=actor.call_id)
