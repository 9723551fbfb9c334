"""One solver attempt: build the prompt from a harness tree, call the solver, parse the output."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from evoarena.benchmarks.base import Benchmark, TaskView
from evoarena.models import GenParams, Message, ModelCallError, RoleModel

if TYPE_CHECKING:
    from evoarena.methods.base import Method


@dataclass(frozen=True)
class Attempt:
    """A solver's attempt. `error` is a provider error (not a task failure); `parse_error` is the model's."""

    task_id: str
    text: str
    answer: str | None
    parse_error: str | None = None
    error: str | None = None
    messages: tuple[Message, ...] = ()
    number: int = 1  # attempt number within the stage (curriculum practice); 1 elsewhere


def solver_params(benchmark: Benchmark, tree: Mapping[str, str]) -> GenParams:
    """The benchmark's defaults, overridden by the harness's `[solver]` knobs in harness.toml."""
    base = benchmark.solver_params()
    raw = tree.get("harness.toml")
    if not raw:
        return base
    try:
        knobs: dict[str, Any] = tomllib.loads(raw).get("solver", {})
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"harness.toml: {err}") from None
    allowed = {"temperature", "max_tokens"}
    return replace(base, **{k: v for k, v in knobs.items() if k in allowed})


def solve(
    method: Method,
    benchmark: Benchmark,
    tree: Mapping[str, str],
    task: TaskView,
    solver: RoleModel,
    *,
    sample_index: int = 0,
) -> Attempt:
    messages = method.build_messages(tree, benchmark.format_task(task), task)
    params = solver_params(benchmark, tree)
    try:
        completion = solver.complete(messages, params, sample_index=sample_index)
    except ModelCallError as err:
        return Attempt(task.id, "", None, error=str(err), messages=tuple(messages))
    parsed = benchmark.parse(completion.text)
    return Attempt(task.id, completion.text, parsed.answer, parsed.error, messages=tuple(messages))
