"""The prompt templates a benchmark package ships in its `prompts/` folder, rendered with jinja2."""

from __future__ import annotations

from functools import cache

import jinja2


@cache
def _environment(package: str) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader(package, "prompts"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def prompt_template(package: str, name: str) -> jinja2.Template:
    """`prompts/<name>` of `package` (e.g. "evoarena.benchmarks.sheets", "task.md"): strict about undefined names,
    keeping the trailing newline, no autoescaping. An unknown name raises `jinja2.TemplateNotFound`."""
    return _environment(package).get_template(name)
