"""`arith-student`: a scripted model for mechanism tests of the quickstart (evidence: mechanism).

As solver it always gets worded addition right; for the other families it answers correctly only when its
prompt already holds a lesson for that family (a reflection naming the rule, or a worked example of
the same family), and otherwise makes the classic mistake of adding every number it sees (for a bare sum, it restates
the expression, as the small base model does zero-shot).
Given a DSPy program's ChatAdapter prompt it answers in the adapter's fields, its instructions and demos being its
lessons; any other DSPy call (an optimiser's proposal) it answers field by field with every family's rule.
As reflector (a prompt ending in "Reflection:") it states the rule for the failed question's family; as GEPA's
proposer (evoarena's or the `gepa` package's reflection prompt) it adds each failed example's rule to the
instruction; as HGM's proposer it diagnoses a failed question by its family's rule and adds that rule to the
harness (`hgm_roles`); as AHE's evolve agent, Autogenesis's and Meta-Harness's proposer it writes a failed family's
rule into the harness (`ahe_roles`, `autogenesis_roles`, `meta_harness_roles`); as TextGrad's backward and
optimizer engines it names that rule and appends it to the system prompt (`textgrad_roles`); as Dynamic
Cheatsheet's curator it adds the problem's family rule to the sheet (`cheatsheet_roles`). A lesson is recognised by a
key phrase of its family's rule, in the wording of `RULES` or of the quickstart's reference prompt.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from functools import partial

from evoarena.api import policy
from evoarena.benchmarks.arith.generator import family_of
from evoarena.models.base import GenParams, Message
from evoarena.scripted.ahe_roles import answer as ahe_answer
from evoarena.scripted.ahe_roles import is_ahe_prompt
from evoarena.scripted.autogenesis_roles import answer as autogenesis_answer
from evoarena.scripted.autogenesis_roles import is_autogenesis_prompt
from evoarena.scripted.cheatsheet_roles import answer as cheatsheet_answer
from evoarena.scripted.cheatsheet_roles import is_curator_prompt
from evoarena.scripted.dspy_chat import answer as dspy_answer
from evoarena.scripted.dspy_chat import is_dspy_prompt
from evoarena.scripted.gepa_reflect import gepa_instruction, is_gepa_reflection
from evoarena.scripted.hgm_roles import answer as hgm_answer
from evoarena.scripted.hgm_roles import is_hgm_prompt
from evoarena.scripted.meta_harness_roles import answer as meta_harness_answer
from evoarena.scripted.meta_harness_roles import is_meta_harness_prompt, of_failures
from evoarena.scripted.textgrad_roles import answer as textgrad_answer
from evoarena.scripted.textgrad_roles import is_textgrad_prompt

RULES = {
    "add": "When more items are received, add them to the starting amount.",
    "sub": "When items are given away, subtract them from the starting amount.",
    "mul": "When there are several groups with the same number in each, multiply groups by items per group.",
    "two_step": "Apply each change in order: add what is found and then subtract what is lost.",
    "count": "To count a word, count every occurrence of exactly that word in the list.",
    "small_sum": "Reply with only the sum of the two numbers, not the expression.",
}
_KEYWORD = {"sub": ("subtract",), "mul": ("multiply",), "two_step": ("in order", "then subtract"),
            "count": ("count every", "number each match"), "small_sum": ("sum of the two",)}


def _numbers(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", text)]


def solve_correctly(question: str) -> int:
    fam = family_of(question)
    if fam == "count":
        target = re.search(r"word '([^']+)'", question)
        items = question.split("appear in:")[-1].rstrip("?").split(",")
        return sum(1 for w in items if target and w.strip() == target.group(1))
    n = _numbers(question)
    if fam == "sub":
        return n[0] - n[1]
    if fam == "mul":
        return n[0] * n[1]
    if fam == "two_step":
        return n[0] + n[1] - n[2]
    return sum(n)


def naive_answer(question: str) -> int:
    if family_of(question) == "small_sum":  # restates the expression, so its first number is read
        return _numbers(question)[0]
    if family_of(question) == "count":
        return len(question.split("appear in:")[-1].split(","))
    return sum(_numbers(question))


def has_lesson(context: str, family: str) -> bool:
    if family == "add" or any(k in context.lower() for k in _KEYWORD[family]):
        return True
    demos = re.findall(r"^Q: (.+)$", context, flags=re.M)
    return any(family_of(q) == family for q in demos)


def family_rule(task: str, feedback: str) -> str | None:
    """The rule of a failed question's family (the lesson HGM's scripted diagnosis names)."""
    return RULES.get(family_of(task.strip()))


def _with_demos(params: GenParams, question: str, demos: list[str], system: str) -> int:
    """Right with a lesson in the instructions or demos; without one, sampled at temperature >= 0.5 it is right on a
    third of (question, seed) pairs, so optimisers that resample (SIMBA, bootstrap rounds) see varied outcomes."""
    seen = system + "\n" + "".join(f"Q: {q}\n" for q in demos)
    lucky = params.temperature >= 0.5 and zlib.crc32(f"{question}:{params.seed}".encode()) % 3 == 0
    return solve_correctly(question) if lucky or has_lesson(seen, family_of(question)) else naive_answer(question)


def failed_rule(inputs: str, feedback: str) -> str | None:
    """The rule of a GEPA example's question (`Q: ...` as the solver saw it, or the bare question) when its feedback
    is no "Correct."."""
    if feedback.startswith("Correct"):
        return None
    question = re.search(r"^(?:Q: )?(.+)$", inputs, flags=re.M)
    return family_rule(question.group(1), feedback) if question else None


@policy("arith-student")
def arith_student(messages: Sequence[Message], params: GenParams) -> str:
    if is_hgm_prompt(messages):
        return hgm_answer(messages, family_rule)
    if is_textgrad_prompt(messages):
        return textgrad_answer(messages, family_rule)
    if is_curator_prompt(messages):
        return cheatsheet_answer(messages, lambda question: family_rule(question, ""))
    if is_ahe_prompt(messages):
        return ahe_answer(messages, family_rule)
    if is_autogenesis_prompt(messages):
        return autogenesis_answer(messages, family_rule)
    if is_meta_harness_prompt(messages):  # without traces it knows the rules of word problems
        return meta_harness_answer(messages, of_failures(family_rule),
                                   known=[RULES[f] for f in _KEYWORD])
    if is_dspy_prompt(messages):  # a DSPy program's ChatAdapter prompt: its demos are the lessons
        return dspy_answer(messages, partial(_with_demos, params), lambda: " ".join(RULES.values()))
    text = "\n\n".join(m.content for m in messages)
    if is_gepa_reflection(text):
        return gepa_instruction(text, failed_rule)
    if text.rstrip().endswith("Reflection:"):
        q = re.search(r"^Question: (.+)$", text, flags=re.M)
        return RULES[family_of(q.group(1))] if q else "I am not sure what went wrong."
    questions = list(re.finditer(r"^Q: (.+)$", text, flags=re.M))
    if not questions:
        return "I do not see a question."
    last = questions[-1]
    question, context = last.group(1), text[: last.start()]
    fam = family_of(question)
    answer = solve_correctly(question) if has_lesson(context, fam) else naive_answer(question)
    return f" {answer}"
