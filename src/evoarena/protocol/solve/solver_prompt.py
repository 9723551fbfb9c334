"""The solver's request for one task under a harness: messages (the method's, or a harness program's run in the
sandbox) and generation parameters (the benchmark's, overridden by harness.toml's `[solver]` knobs)."""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from evoarena.api import Benchmark, Method, TaskView
from evoarena.harness.program import is_program
from evoarena.models import GenParams, Message
from evoarena.protocol.solve.harness_program import program_messages


def solver_params(benchmark: Benchmark, tree: Mapping[str, str]) -> GenParams:
    """The benchmark's defaults, overridden by the harness's `[solver]` knobs in harness.toml (`temperature`,
    `max_tokens`, `stop`: a list of stop sequences, `[]` for none)."""
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
    allowed = {"temperature", "max_tokens", "stop"}
    stop = knobs.get("stop", [])
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        raise ValueError(f"harness.toml: [solver] stop must be a list of strings, not {stop!r}")
    return tuple((k, tuple(v) if k == "stop" else v) for k, v in knobs.items() if k in allowed)


@dataclass(frozen=True)
class SolverRequest:
    """What the solver is sent for one task: the messages and the generation parameters (before the role model adds
    the cell's seed)."""

    messages: tuple[Message, ...]
    params: GenParams


def solver_request(method: Method, benchmark: Benchmark, tree: Mapping[str, str], task: TaskView) -> SolverRequest:
    """The one place the solve prompt is assembled from a harness; `solve` and `evoarena export --as prompt` use it.
    A harness program (`harness.py`) builds it in the sandbox instead of the method (HarnessProgramError when not)."""
    return SolverRequest(harness_messages(method, tree, benchmark.format_task(task), task),
                         solver_params(benchmark, tree))


def harness_messages(method: Method, tree: Mapping[str, str], task_text: str, task: TaskView, *,
                     episode: Mapping[str, Any] | None = None) -> tuple[Message, ...]:
    """The solver's messages for `task_text` under `tree`: the method's `build_messages`, or the harness program's
    (run in the sandbox; HarnessProgramError when it fails). `episode`: on an interactive task, the episode so far,
    handed to a harness program (its first observation, every turn, the observation now, the steps left)."""
    if is_program(tree):
        return program_messages(tree, task_text, method.context(tree, task), episode=episode)
    return tuple(method.build_messages(tree, task_text, task))
