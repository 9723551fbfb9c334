"""A weaker scripted student for transfer tests: it answers as arith-student does without a lesson, whatever
its prompt holds (a harness's rules and worked examples change nothing), so only worded addition comes out right."""

import re
from collections.abc import Sequence

from evoarena.models import GenParams, Message
from evoarena.scripted.arith import arith_student, naive_answer


def weak_student(messages: Sequence[Message], params: GenParams) -> str:
    questions = re.findall(r"^Q: (.+)$", "\n\n".join(m.content for m in messages), flags=re.M)
    return f" {naive_answer(questions[-1])}" if questions else arith_student(messages, params)
