"""A slowed-down scripted student, importable by a subprocess as `slow_policy:slow_student`."""

import time
from collections.abc import Sequence

from evoarena.models import GenParams, Message
from evoarena.scripted.arith import arith_student


def slow_student(messages: Sequence[Message], params: GenParams) -> str:
    time.sleep(0.03)
    return arith_student(messages, params)
