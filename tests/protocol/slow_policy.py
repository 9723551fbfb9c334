"""A slowed-down scripted student, importable by a subprocess as `slow_policy:slow_student`."""

import time
from collections.abc import Sequence

from evoarena.benchmarks.arith.policy import arith_student
from evoarena.models import GenParams, Message


def slow_student(messages: Sequence[Message], params: GenParams) -> str:
    time.sleep(0.03)
    return arith_student(messages, params)
