"""Scripted CLR agents for mechanism tests (evidence: mechanism): `clr-student` (the exception-lister),
`clr-class-knower` (reads the roster) and `clr-attribute-overgeneraliser` (excludes by a shared attribute).

`clr-student`:

As solver it writes a program that excludes each rule's example plus every value its prompt states "belongs
to" that rule's label (from whatever state the method shows it): an exception list, never a class. In every
update role of every method (`role_policies.py`) it records the feedback's revealed members as such
statements, in the role's own format. It therefore reproduces the paper's central failure: practice passes
once the revealed member is listed, while the test stays on the frozen ladder. Sampled (temperature > 0, seeded)
it sometimes adds one random guess (`sampled_guess`), so a group of its samples can have mixed outcomes.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence
from functools import cache

from evoarena.api import policy
from evoarena.models.base import GenParams, Message
from evoarena.scripted.clr.membership import RULE, stated_members
from evoarena.scripted.clr.roles import answer_role

_ENTITY = re.compile(r"returns a dict mapping each (?P<entity>.+?) to the number")


def exclusion_program(entity: str, excluded: dict[str, set[str]]) -> str:
    """A CLR program that counts records per entity, skipping records whose field value is in `excluded`."""
    return (
        f"EXCLUDED = {({f: sorted(v) for f, v in sorted(excluded.items())})!r}\n"
        "def solve(records):\n"
        "    totals = {}\n"
        "    for r in records:\n"
        f"        totals.setdefault(r[{entity!r}], 0)\n"
        "        if any(r.get(f) in vals for f, vals in EXCLUDED.items()):\n"
        "            continue\n"
        f"        totals[r[{entity!r}]] += 1\n"
        "    return totals\n"
    )


@policy("clr-student")
def clr_student(messages: Sequence[Message], params: GenParams) -> str:
    """The exception-lister: an update role's reply when the prompt is one (`role_policies`), else the solver."""
    text = "\n".join(m.content for m in messages)
    reply = answer_role("\n".join(m.content for m in messages if m.role == "user"))
    if reply is not None:
        return reply
    rules = list(RULE.finditer(text))
    entity = _ENTITY.search(text)
    if not rules or entity is None:
        return "I cannot find the task."
    field_of = {m.group("label"): m.group("field") for m in rules}
    excluded: dict[str, set[str]] = {}
    for m in rules:
        excluded.setdefault(m.group("field"), set()).add(m.group("example"))
    for value, label in stated_members(text):
        if label in field_of:
            excluded[field_of[label]].add(value)
    guess = sampled_guess(text, rules, excluded, params)
    if guess is not None:
        excluded[guess[0]].add(guess[1])
    return f"```python\n{exclusion_program(entity.group('entity'), excluded)}```\n"


def sampled_guess(text: str, rules: list[re.Match[str]], excluded: dict[str, set[str]],
                  params: GenParams) -> tuple[str, str] | None:
    """What sampling adds to the lister: at temperature > 0 with a seed, half of the draws also exclude one
    look-alike of a random rule's example (a described value whose description opens like the example's, as the
    attribute over-generaliser reads it) — a guess that sometimes names a hidden member, so a group of samples can
    have mixed outcomes, and sometimes a non-member. At temperature 0 the lister is deterministic."""
    if params.temperature <= 0 or params.seed is None or not rules:
        return None
    rng = random.Random(hashlib.sha256(f"{params.seed}\n{text}".encode()).digest())
    if rng.random() >= 0.5:
        return None
    rule = rng.choice(rules)
    field, kind = rule.group("field"), attribute(rule.group("example"))
    candidates = sorted(v for v in set(_described(text)) - excluded[field] if attribute(v) == kind)
    return (field, rng.choice(candidates)) if candidates else None


def attribute(value: str) -> str:
    """The first word of a value's description in the shipped library ('Airline', 'European', …)."""
    return _descriptions().get(value, "").split(" ")[0]


@cache
def _descriptions() -> dict[str, str]:
    from evoarena.benchmarks.clr.library import shipped_library

    return {v: d for u in shipped_library().universes.values() for v, d in u.values.items()}


def _rules_and_entity(text: str) -> tuple[list[re.Match[str]], str | None]:
    ent = _ENTITY.search(text)
    return list(RULE.finditer(text)), ent.group("entity") if ent else None


def _described(text: str) -> list[str]:
    """Values listed under "Values that may appear in the inputs" (a value may itself contain ': ')."""
    from evoarena.benchmarks.clr.library import shipped_library

    known = {v for u in shipped_library().universes.values() for v in u.values}
    block = text.split("Values that may appear in the inputs:", 1)[-1].split("\n\n", 1)[0]
    out = []
    for line in block.splitlines():
        body = line[2:] if line.startswith("- ") else line
        cuts = [i for i in range(len(body)) if body.startswith(": ", i) and body[:i] in known]
        if cuts:
            out.append(body[: cuts[-1]])
    return out


@policy("clr-class-knower")
def clr_class_knower(messages: Sequence[Message], params: GenParams) -> str:
    """Reads the hidden class from the shipped default release (a mechanism oracle: it knows the roster)."""
    from evoarena.benchmarks.clr.library import shipped_library
    from evoarena.benchmarks.clr.release import build_release

    text = "\n".join(m.content for m in messages)
    rules, entity = _rules_and_entity(text)
    if not rules or entity is None:
        return "I cannot find the task."
    lib = shipped_library()
    slots = {(s["label"], s["example"]): s for c in build_release(0)["chains"] for s in c["slots"]}
    excluded: dict[str, set[str]] = {}
    for m in rules:
        slot = slots.get((m.group("label"), m.group("example")))
        members = set(lib.rosters[slot["class_id"]].members) if slot else {m.group("example")}
        excluded.setdefault(m.group("field"), set()).update(members)
    return f"```python\n{exclusion_program(entity, excluded)}```\n"


@policy("clr-attribute-overgeneraliser")
def clr_attribute_overgeneraliser(messages: Sequence[Message], params: GenParams) -> str:
    """Excludes every described value whose description opens like the example's (e.g. 'Airline of …',
    'European country …'): an attribute rule instead of the class, so it drops look-alike non-members."""
    text = "\n".join(m.content for m in messages)
    rules, entity = _rules_and_entity(text)
    if not rules or entity is None:
        return "I cannot find the task."
    described = _described(text)
    excluded: dict[str, set[str]] = {}
    for m in rules:
        example = m.group("example")
        same = {v for v in described if attribute(v) == attribute(example)}
        excluded.setdefault(m.group("field"), set()).update(same | {example})
    return f"```python\n{exclusion_program(entity, excluded)}```\n"
