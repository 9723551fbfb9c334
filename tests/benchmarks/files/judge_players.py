"""Scripted models for the judge grader's tests: a solver that says what each task asks it to say, judges that grade
fairly, contrarily, with a leaky comment or with an unreadable reply, and a method that reaches for the judge."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evoarena.api import Manifest, Method, PracticeContext, TaskView
from evoarena.models import GenParams, Message, ProviderError

_GRADED = re.compile(r"Reference answers?[^\n]*:\n(.*?)\nAnswer to grade:\n(.*?)\n\nDecide", re.S)


def solver(messages: list[Message], params: GenParams) -> str:
    prompt = messages[-1].content
    if prompt.rstrip().endswith("Reflection:"):
        return "Give the answer in the form the task expects."
    said: str = json.loads(prompt.rsplit("SAY ", 1)[1].splitlines()[0])
    return said


def _matches(messages: list[Message]) -> bool:
    refs, answer = _GRADED.search(messages[-1].content).groups()  # type: ignore[union-attr]
    return any(r.strip().lower() in answer.lower() for r in refs.splitlines() if r.strip())


def fair(messages: list[Message], params: GenParams) -> str:
    return "The answer reaches the same result.\nScore: 1" if _matches(messages) else "It differs.\nScore: 0"


def contrary(messages: list[Message], params: GenParams) -> str:
    return "PASS" if not _matches(messages) else "Verdict: FAIL"


def leaky(messages: list[Message], params: GenParams) -> str:
    refs = _GRADED.search(messages[-1].content).group(1)  # type: ignore[union-attr]
    return f"The right answer was {refs.strip()}.\nScore: 0.25"


def garbled(messages: list[Message], params: GenParams) -> str:
    return "Looks fine to me, I would give it full marks."


class Peeker(Method):
    """Practises like frozen and records whether it can reach a `judge` model."""

    roles = ("solver",)

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        return ""

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        try:
            ctx.model("judge")
            reached: Any = True
        except KeyError as err:
            reached = str(err)
        ctx.log("peek", {"reached": reached})
        return None


def down(messages: list[Message], params: GenParams) -> str:
    """A judge whose endpoint is down while the flag file named by EVOARENA_TEST_JUDGE_DOWN exists."""
    flag = os.environ.get("EVOARENA_TEST_JUDGE_DOWN")
    if flag and Path(flag).exists():
        raise ProviderError("HTTP 503 service unavailable", retryable=True, status=503)
    return fair(messages, params)
