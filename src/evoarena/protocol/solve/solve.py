"""One solver attempt: build the prompt from a harness tree, call the solver, parse the output — or, for an
interactive benchmark, one episode with the solver acting step by step."""

from __future__ import annotations

from collections.abc import Mapping

from evoarena.api import Attempt, Benchmark, InteractiveBenchmark, Method, Parsed, TaskView
from evoarena.models import ModelCallError, RoleModel
from evoarena.protocol.solve.episode_solve import solve_episode
from evoarena.protocol.solve.harness_program import HarnessProgramError
from evoarena.protocol.solve.solver_prompt import SolverRequest, harness_messages, solver_params, solver_request

__all__ = ["SolverRequest", "harness_messages", "solve", "solver_params", "solver_request"]


def solve(
    method: Method,
    benchmark: Benchmark,
    tree: Mapping[str, str],
    task: TaskView,
    solver: RoleModel,
    *,
    sample_index: int = 0,
    roles: Mapping[str, RoleModel] | None = None,
) -> Attempt:
    """`roles`: the cell's other role models, which a method's episode agent may call on an interactive task."""
    if isinstance(benchmark, InteractiveBenchmark):  # an episode: the solver (or the method's agent) acts step by step
        return solve_episode(method, benchmark, tree, task, solver, roles=roles, sample_index=sample_index)
    try:
        request = solver_request(method, benchmark, tree, task)
    except HarnessProgramError as err:  # the harness's failure on this task: no model call, scores as a parse error
        return Attempt(task.id, "", None, f"harness program: {err}")
    messages = request.messages
    try:
        completion = solver.complete(messages, request.params, sample_index=sample_index)
    except ModelCallError as err:
        return Attempt(task.id, "", None, error=str(err), messages=messages)
    reading = method.read_reply(tree, completion.text)  # a refusal by the method's reader is a parse error
    parsed = benchmark.parse(reading.answer) if reading.answer is not None else Parsed(None, f"reply: {reading.error}")
    return Attempt(task.id, completion.text, parsed.answer, parsed.error, messages=messages,
                   call_id=getattr(completion, "call_id", None))
