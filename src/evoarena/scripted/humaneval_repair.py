"""`humaneval-repairer`: a scripted model for mechanism tests of the humaneval `repair` mode (evidence: mechanism).

As the solver it recognises the function it is shown (a HumanEval problem's prompt begins it) and the bug in it
(which single mutation of the canonical solution it is, `mutate.mutations`); it fixes the bug — replies the canonical
function — only when its context holds the check for that kind of bug (`CHECKS`), and otherwise hands the function
back unchanged, as a model that sees no bug does. As AHE's evolve agent (`ahe_roles`) its lesson for a failed task
is the checklist of the kinds of bug the failed function's code could hold (the operators its canonical code has):
what a reviewer who knows the code, not the bug, would write down. Without a problem it recognises it has no lesson.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from evoarena.api import policy
from evoarena.benchmarks.humaneval.mutate import KINDS, Mutation, mutations
from evoarena.benchmarks.humaneval.problems import Problem, problems
from evoarena.models.base import GenParams, Message
from evoarena.scripted.ahe_roles import answer as ahe_answer
from evoarena.scripted.ahe_roles import is_ahe_prompt

CHECKS = {
    "compare": "Check every comparison's boundary: < against <=, > against >=, == against !=.",
    "arith": "Check that every + and - adds or subtracts as the docstring says.",
    "constant": "Check every number in the code for an off-by-one (a start, an end, a step, a size).",
    "boolop": "Check whether each combined condition needs `and` or `or`.",
    "not": "Check each condition for a missing `not`.",
    "swap": "Check the operand order of every -, /, //, %, ** and shift.",
}
"""The check that lets the solver see each kind of bug (`mutate.KINDS`)."""
_CODE = re.compile(r"```python\n(.*?)```", re.S)


@cache
def _mutations(task_id: str) -> tuple[Mutation, ...]:
    p = next(p for p in problems() if p.task_id == task_id)
    return tuple(mutations(p.prompt, p.canonical_solution))


def recognised(function: str) -> tuple[Problem, str | None] | None:
    """The problem whose prompt begins `function`, and the kind of the one mutation that `function` is (None when it
    is no single mutation); None for a function of no problem."""
    for p in problems():
        if function.startswith(p.prompt):
            kind = next((m.kind for m in _mutations(p.task_id) if m.function == function), None)
            return p, kind
    return None


def checklist(task: str, feedback: str) -> str | None:
    """The lesson for a failed repair task (as the evolve prompt shows it, clipped): the checks for the kinds of bug
    its function's canonical code could hold, in `KINDS` order; None for a function of no problem."""
    name = re.search(r"```python.*?\bdef (\w+)\(", task, re.S)
    found = [p for p in problems() if name is not None and p.entry_point == name.group(1)]
    if not found:
        return None
    kinds = {m.kind for m in _mutations(found[0].task_id)}
    return " ".join(CHECKS[k] for k in KINDS if k in kinds) or None


@policy("humaneval-repairer")
def humaneval_repairer(messages: Sequence[Message], params: GenParams) -> str:
    if is_ahe_prompt(messages):
        return ahe_answer(messages, checklist)
    last = messages[-1].content if messages else ""
    code = _CODE.search(last)
    if code is None:
        return "I do not see a function."
    function = code.group(1)
    context = "\n".join(m.content for m in messages[:-1]) + last[: code.start()]
    known = recognised(function)
    if known is not None and known[1] is not None and CHECKS[known[1]] in context:
        problem = known[0]
        return f"```python\n{problem.prompt}{problem.canonical_solution}```"
    return f"```python\n{function}```"
