"""A weaker scripted student for transfer tests: the quickstart student, except that it never learns multiplication
(a lesson for products in its prompt changes nothing)."""

import re
from collections.abc import Sequence

from evoarena.benchmarks.arith.generator import family_of
from evoarena.models import GenParams, Message
from evoarena.scripted.arith import arith_student, naive_answer


def weak_student(messages: Sequence[Message], params: GenParams) -> str:
    questions = re.findall(r"^Q: (.+)$", "\n\n".join(m.content for m in messages), flags=re.M)
    if questions and family_of(questions[-1]) == "mul":
        return f" {naive_answer(questions[-1])}"
    return arith_student(messages, params)
