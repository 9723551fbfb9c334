"""Prompt templates of the built-in methods (each method's own, in its package's `prompts/` folder), and what a
curator sees of a generator's output."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import jinja2

from evoarena.api import Attempt, PracticeContext, TaskView


@cache
def _env(package: str) -> jinja2.Environment:
    folder = resources.files(package).joinpath("prompts")
    return jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: folder.joinpath(name).read_text("utf-8")),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render_prompt(package: str | None, name: str, **values: Any) -> str:
    """Render template `<name>.md` from the `prompts/` folder of a method's package: a method module passes its
    `__package__`, so each method reads only its own templates (which may `{% include %}` each other by file name)."""
    if not package:
        raise ValueError(f"prompt {name!r}: no package to read it from (call from a module inside a package)")
    return _env(package).get_template(f"{name}.md").render(**values)


@cache
def template_text(package: str | None, name: str) -> tuple[str, ...]:
    """The literal parts of template `<name>.md` (what the method wrote, not the values filled in): a reply that
    copies them echoes its prompt (`api.reply_check.echo`)."""
    if not package:
        raise ValueError(f"prompt {name!r}: no package to read it from (call from a module inside a package)")
    env = _env(package)
    source = env.loader.get_source(env, f"{name}.md")[0]  # type: ignore[union-attr]  # a FunctionLoader
    return tuple(value for _, kind, value in env.lex(source) if kind == "data" and value.strip())


def generator_output(ctx: PracticeContext, task: TaskView, attempt: Attempt) -> str:
    """The generator's full output as the curator sees it: its text, plus the execution output where the benchmark
    runs the answer (as released DC appends the output of the code it executes); never a correctness verdict."""
    observed = ctx.observation(task, attempt)
    text = attempt.text.strip()
    return f"{text}\n\nExecution output:\n{observed.strip()}" if observed else text
