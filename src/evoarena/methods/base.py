"""The method (evolver) interface: initialise a harness, build the solve prompt, practise and update."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, ClassVar

import jinja2

from evoarena.benchmarks.base import TaskView
from evoarena.harness import HarnessWorkspace, Manifest
from evoarena.models import GenParams, Message

if TYPE_CHECKING:
    from evoarena.protocol.context import PracticeContext
    from evoarena.protocol.solve import Attempt


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FunctionLoader(
            lambda name: resources.files("evoarena.methods").joinpath("prompts", name).read_text("utf-8")
        ),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render_prompt(name: str, **values: Any) -> str:
    """Render a prompt template file from `methods/prompts/`."""
    return _env().get_template(name).render(**values)


def generator_output(ctx: PracticeContext, task: TaskView, attempt: Attempt) -> str:
    """The generator's full output as the curator sees it: its text, plus the execution output where the benchmark
    runs the answer (as released DC appends the output of the code it executes); never a correctness verdict."""
    observed = ctx.observation(task, attempt)
    text = attempt.text.strip()
    return f"{text}\n\nExecution output:\n{observed.strip()}" if observed else text


def harness_toml(params: GenParams) -> str:
    return (
        "# Harness knobs. [solver] overrides the benchmark's generation defaults.\n"
        "[solver]\n"
        f"temperature = {params.temperature}\n"
        f"max_tokens = {params.max_tokens}\n"
    )


class Method(ABC):
    """An evolution method. Its state is plain files in the harness; it never sees the test split."""

    name: ClassVar[str]
    roles: ClassVar[tuple[str, ...]] = ("solver",)
    defaults: ClassVar[dict[str, Any]] = {}
    """Every parameter the method accepts, with its default; unknown names are refused."""

    def __init__(self, **params: Any) -> None:
        allowed = set(self.defaults) | {"update_note"}
        unknown = sorted(set(params) - allowed)
        if unknown:
            raise ValueError(
                f"methods.{self.name}.params: unknown {', '.join(unknown)} (known: {', '.join(sorted(allowed))})"
            )
        self.params = {**self.defaults, **params}

    def initialize(self, ws: HarnessWorkspace, system_prompt: str, solver_params: GenParams) -> None:
        ws.write("system.md", system_prompt)
        ws.write("harness.toml", harness_toml(solver_params))

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        """Method state shown to the solver before the task (reflections, demos, playbook…)."""
        return ""

    def build_messages(self, tree: Mapping[str, str], task_text: str, task: TaskView) -> list[Message]:
        block = self.context(tree, task).strip()
        user = f"{block}\n\n{task_text}" if block else task_text
        return [Message("system", tree.get("system.md", "").strip()), Message("user", user)]

    @abstractmethod
    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        """One practice step on a train task; may update the harness through `ctx.harness`.
        Returns a manifest describing the change (None when nothing changed)."""
