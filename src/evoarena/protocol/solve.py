"""One solver attempt: build the prompt from a harness tree, call the solver, parse the output."""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from evoarena.api import Attempt, Benchmark, Method, TaskView
from evoarena.harness.program import is_program
from evoarena.models import GenParams, Message, ModelCallError, RoleModel
from evoarena.protocol.harness_program import HarnessProgramError, program_messages


def solver_params(benchmark: Benchmark, tree: Mapping[str, str]) -> GenParams:
    """The benchmark's defaults, overridden by the harness's `[solver]` knobs in harness.toml."""
    base = benchmark.solver_params()
    raw = tree.get("harness.toml")
    if not raw:
        return base
    return replace(base, **dict(_solver_knobs(raw)))


@functools.lru_cache(maxsize=256)
def _solver_knobs(raw: str) -> tuple[tuple[str, Any], ...]:
    """The `[solver]` knobs a harness.toml sets (parsed once per text: every attempt of a version reads the same)."""
    try:
        knobs: dict[str, Any] = tomllib.loads(raw).get("solver", {})
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"harness.toml: {err}") from None
    allowed = {"temperature", "max_tokens"}
    return tuple((k, v) for k, v in knobs.items() if k in allowed)


@dataclass(frozen=True)
class SolverRequest:
    """What the solver is sent for one task: the messages and the generation parameters (before the role model adds
    the cell's seed)."""

    messages: tuple[Message, ...]
    params: GenParams


def solver_request(method: Method, benchmark: Benchmark, tree: Mapping[str, str], task: TaskView) -> SolverRequest:
    """The one place the solve prompt is assembled from a harness; `solve` and `evoarena export --as prompt` use it.
    A harness program (`harness.py`) builds it in the sandbox instead of the method (HarnessProgramError when not)."""
    task_text = benchmark.format_task(task)
    if is_program(tree):
        messages: tuple[Message, ...] | list[Message] = program_messages(tree, task_text, method.context(tree, task))
    else:
        messages = method.build_messages(tree, task_text, task)
    return SolverRequest(tuple(messages), solver_params(benchmark, tree))


def solve(
    method: Method,
    benchmark: Benchmark,
    tree: Mapping[str, str],
    task: TaskView,
    solver: RoleModel,
    *,
    sample_index: int = 0,
) -> Attempt:
    try:
        request = solver_request(method, benchmark, tree, task)
    except HarnessProgramError as err:  # the harness's failure on this task: no model call, scores as a parse error
        return Attempt(task.id, "", None, f"harness program: {err}")
    messages = request.messages
    try:
        completion = solver.complete(messages, request.params, sample_index=sample_index)
    except ModelCallError as err:
        return Attempt(task.id, "", None, error=str(err), messages=messages)
    parsed = benchmark.parse(completion.text)
    return Attempt(task.id, completion.text, parsed.answer, parsed.error, messages=messages,
                   call_id=getattr(completion, "call_id", None))
