"""Scripted players for the reasoning_gym benchmark's tests: they compute basic_arithmetic and spell_backward answers
themselves, and say them right, wrong, or without reasoning_gym's <answer> tags until a reflection teaches them."""

from __future__ import annotations

import re
from fractions import Fraction

from evoarena.models import GenParams, Message

LESSON = "Put the final answer inside <answer></answer> tags."


def solve(prompt: str) -> str:
    """The answer to the last basic_arithmetic or spell_backward question in `prompt`."""
    word = re.findall(r"Spell this word backward \(example: sun -> nus\): (\S+)", prompt)
    if word:
        return word[-1][::-1]
    expr = re.findall(r"Calculate (.+?)\.?$", prompt, re.M)[-1]
    exact = re.sub(r"(\d+)", r"Fraction(\1)", expr)
    value = eval(exact, {"Fraction": Fraction, "__builtins__": {}})  # digits, + - * / ( ) only
    return str(value.numerator) if value.denominator == 1 else str(float(value))


def right(messages: list[Message], params: GenParams) -> str:
    return f"Let me work it out.\n<answer>{solve(messages[-1].content)}</answer>"


def wrong(messages: list[Message], params: GenParams) -> str:
    answer = solve(messages[-1].content)
    return f"<answer>{int(answer) + 1}</answer>"  # an integer one off: no partial credit for containing it


def line(messages: list[Message], params: GenParams) -> str:
    return f"Working...\nAnswer: {solve(messages[-1].content)}"


def learner(messages: list[Message], params: GenParams) -> str:
    """Right, but without the tags until the lesson is in its prompt; as reflexion's reflector, writes the lesson."""
    prompt = "\n".join(m.content for m in messages)
    if messages[-1].content.rstrip().endswith("Reflection:"):
        return LESSON
    answer = solve(messages[-1].content)
    return f"<answer>{answer}</answer>" if LESSON in prompt else f"The answer is {answer}."
