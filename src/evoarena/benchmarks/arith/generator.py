"""Seeded arithmetic and counting word problems in five families."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from evoarena.benchmarks.generated import distinct

NAMES = ["Tom", "Mia", "Sam", "Ana", "Leo", "Zoe", "Ben", "Ivy", "Max", "Eva", "Raj", "Kim"]
ITEMS = ["apples", "pens", "stickers", "coins", "marbles", "books", "cards", "shells", "stamps", "cookies"]
CONTAINERS = ["boxes", "bags", "jars", "baskets", "shelves", "trays"]
WORDS = ["red", "blue", "green", "cat", "dog", "sun", "tree", "fish"]


@dataclass(frozen=True)
class Problem:
    family: str
    question: str
    answer: int


def _add(r: random.Random) -> Problem:
    n, it, a, b = r.choice(NAMES), r.choice(ITEMS), r.randint(2, 20), r.randint(2, 20)
    return Problem("add", f"{n} has {a} {it} and gets {b} more. How many {it} does {n} have now?", a + b)


def _sub(r: random.Random) -> Problem:
    n, it = r.choice(NAMES), r.choice(ITEMS)
    a = r.randint(8, 30)
    b = r.randint(1, a - 1)
    return Problem("sub", f"{n} had {a} {it} and gave away {b}. How many {it} does {n} have left?", a - b)


def _mul(r: random.Random) -> Problem:
    c, it, a, b = r.choice(CONTAINERS), r.choice(ITEMS), r.randint(2, 9), r.randint(2, 9)
    return Problem("mul", f"There are {a} {c} with {b} {it} in each. How many {it} are there in total?", a * b)


def _two_step(r: random.Random) -> Problem:
    n, it = r.choice(NAMES), r.choice(ITEMS)
    a, b = r.randint(5, 20), r.randint(2, 10)
    c = r.randint(1, a + b - 1)
    q = f"{n} has {a} {it}, finds {b} more, and then loses {c}. How many {it} does {n} have?"
    return Problem("two_step", q, a + b - c)


def _small_sum(r: random.Random) -> Problem:
    a, b = r.randint(1, 9), r.randint(1, 5)
    return Problem("small_sum", f"{a} + {b} =", a + b)


def _count(r: random.Random) -> Problem:
    target = r.choice(WORDS)
    others = [w for w in WORDS if w != target]
    k = r.randint(1, 4)
    seq = [target] * k + [r.choice(others) for _ in range(r.randint(2, 5))]
    r.shuffle(seq)
    return Problem("count", f"How many times does the word '{target}' appear in: {', '.join(seq)}?", k)


Family = Literal["add", "sub", "mul", "two_step", "count", "small_sum"]
FAMILIES: dict[str, Callable[[random.Random], Problem]] = {
    "add": _add,
    "sub": _sub,
    "mul": _mul,
    "two_step": _two_step,
    "count": _count,
    "small_sum": _small_sum,
}
DEFAULT_FAMILIES: list[Family] = ["add", "sub", "mul", "two_step", "count"]


def family_of(question: str) -> str:
    """Classify a question by its wording (used by the scripted student policy)."""
    if question.endswith("="):
        return "small_sum"
    if "appear in" in question:
        return "count"
    if " in each" in question:
        return "mul"
    if "and then" in question:
        return "two_step"
    if "gave away" in question:
        return "sub"
    return "add"


def generate(seed: int, n: int, families: list[str]) -> list[Problem]:
    """`n` distinct problems, cycling through `families` (a family listed twice comes twice as often)."""
    r = random.Random(f"arith:{seed}")
    return distinct(lambda k: FAMILIES[families[k % len(families)]](r), lambda p: p.question, n,
                    f"problems from families {families}")
