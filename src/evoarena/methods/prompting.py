"""Prompt templates of the built-in methods (`methods/prompts/`), and what a curator sees of a generator's output."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import jinja2

from evoarena.api import Attempt, PracticeContext, TaskView


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
