"""The `numeric` grader reads whole numbers written in words: every number an independent renderer writes (with and
without `and`, hyphens, any case, `minus`) reads back as itself, and what the docs say is not read is not."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from evoarena.api import Feedback
from evoarena.benchmarks.files import FilesBenchmark
from evoarena.benchmarks.files.graders import make_grader
from evoarena.benchmarks.files.parsing import first_number

SMALL = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def words(n: int, *, use_and: bool, hyphen: bool) -> str:
    """British-style English for 0 <= n < 10**12, written independently of the reader."""
    if n < 20:
        return SMALL[n]
    if n < 100:
        return TENS[n // 10 - 2] + (("-" if hyphen else " ") + SMALL[n % 10] if n % 10 else "")
    if n < 1000:
        rest = n % 100
        return f"{SMALL[n // 100]} hundred" + ((" and " if use_and else " ") + words(rest, use_and=use_and,
                                                                                      hyphen=hyphen) if rest else "")
    for scale, name in ((10**9, "billion"), (10**6, "million"), (10**3, "thousand")):
        if n >= scale:
            rest = n % scale
            head = f"{words(n // scale, use_and=use_and, hyphen=hyphen)} {name}"
            if not rest:
                return head
            joint = " and " if use_and and rest < 100 else " "
            return head + joint + words(rest, use_and=use_and, hyphen=hyphen)
    raise AssertionError(n)


def test_every_number_a_renderer_writes_reads_back() -> None:
    rng = random.Random(7)
    numbers = [*range(0, 1200), *(rng.randrange(10**k) for k in range(4, 13) for _ in range(150))]
    for n in numbers:
        use_and, hyphen, sign = rng.random() < 0.5, rng.random() < 0.5, rng.choice([1, 1, -1])
        text = words(n, use_and=use_and, hyphen=hyphen)
        text = rng.choice([str.lower, str.upper, str.title])(text)
        if sign < 0 and n:
            text = rng.choice(["minus ", "Negative "]) + text
        got = first_number(f"The result is {text}, I think.")
        assert got is not None and got.value == sign * n and got.text == text, (n, text, got)


@pytest.mark.parametrize(("text", "value"), [
    ("Seven", 7), ("twenty-one", 21), ("one hundred and five", 105), ("minus three", -3),
    ("It is 42, not seven", 42), ("seven, not 42", 7),  # the first number, in digits or words
    ("one two", 1), ("twenty twenty", 20), ("three and four", 3),  # a run of words is read only while well-formed
    ("someone said 5", 5), ("none of them: 4", 4), ("a one-off 4", 4),  # words inside other words are not numbers
])
def test_which_number_is_read(text: str, value: int) -> None:
    got = first_number(text)
    assert got is not None and got.value == Fraction(value)


@pytest.mark.parametrize("text", ["three point five", "half", "the third", "a hundred", "a dozen", "nought"])
def test_what_is_not_read(text: str) -> None:
    assert first_number(text) is None


def test_the_numeric_grader_with_words_on_either_side() -> None:
    grader = make_grader("numeric", FilesBenchmark.defaults)

    def verdict(output: str, reference: str) -> Feedback:
        answer = grader.parse(output).answer
        assert answer is not None
        return grader.grade("", answer, [reference], {})

    assert verdict("Answer: seven", "7").passed
    assert verdict("Answer: 21", "twenty-one").passed
    assert verdict("Answer: Two thousand and five apples", "2,005").passed
    fb = verdict("Answer: eight", "7")
    assert not fb.passed and fb.message == "The answer eight is not the expected value."
    assert grader.check_reference("seven", {}) is None and grader.check_reference("many", {}) is not None
