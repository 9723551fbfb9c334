"""Membership statements in CLR text: "<value> belongs to <label>" (evidence: mechanism helpers).

The scripted exception-lister (`clr-student`) reads these in two places: its solver excludes every stated
member, and its update roles copy the members the feedback revealed into the method's state. Both must find
the same values whatever the surrounding text is (a playbook bullet after `::`, a JSON string, a markdown
heading), and values may themselves contain '.', ':' or ',' ("CWE-79: Cross-site Scripting", "Washington,
D.C."), so a value is resolved against the shipped library's values first and only then cut at punctuation.
"""

from __future__ import annotations

import re
from functools import cache

Member = tuple[str, str]
"""(value, label)."""

RULE = re.compile(
    r"A record is in (?P<label>.+?) when its (?P<field>\w+) belongs to (?P=label); "
    r"for example, (?P<example>.+?) belongs to (?P=label)\."
)
"""A rule's definition line in the task text (`prompts/task.md`)."""

_STATEMENT = re.compile(r" belongs to (?P<label>[A-Za-z]+(?: [A-Za-z]+)* [A-Z]\d)(?P<tail>,| wherever|;|\.)")
_DEFINITION = re.compile(r"\bwhen its \w+$")
_CUT = re.compile(r"[.;:]")


@cache
def known_values() -> dict[str, tuple[str, ...]]:
    """Every value of the shipped library's universes (the values a CLR task can mention), by last word."""
    from evoarena.benchmarks.clr.library import shipped_library

    by_last: dict[str, set[str]] = {}
    for u in shipped_library().universes.values():
        for v in u.values:
            if v.split():
                by_last.setdefault(v.split()[-1], set()).add(v)
    return {w: tuple(sorted(vs, key=len, reverse=True)) for w, vs in by_last.items()}


def _line_before(text: str, end: int) -> str:
    return text[text.rfind("\n", 0, end) + 1 : end]


def _value_before(line: str) -> str:
    """The value that ends `line`: the longest known value ending there at a word boundary, else the text
    after the last '.', ';' or ':', without bullet marks and quotes."""
    words = line.split()
    for v in known_values().get(words[-1], ()) if words else ():  # longest first
        before = line[: len(line) - len(v)]
        if line.endswith(v) and (not before or not before[-1].isalnum()):
            return v
    return _CUT.split(line)[-1].strip().lstrip("-*#> ").strip().strip("\"'`").strip()


def stated_members(text: str) -> list[Member]:
    """(value, label) of every "X belongs to <label>" statement, in order and without repeats, except a rule's
    own definition ("… when its field belongs to L") and its example ("for example, X belongs to L")."""
    out: dict[Member, None] = {}
    for m in _STATEMENT.finditer(text):
        line = _line_before(text, m.start())
        if _DEFINITION.search(line):
            continue
        value = _value_before(line)
        if not value or line.rstrip().endswith(f"for example, {value}") or value.startswith("for example"):
            continue
        out[(value, m.group("label"))] = None
    return list(out)


def revealed_members(text: str) -> list[Member]:
    """The members feedback revealed: stated members, without a rule's example (the feedback's "X belongs to L
    wherever it appears" for a moved example, or any example the text's rule definitions name)."""
    examples = {(m.group("example"), m.group("label")) for m in RULE.finditer(text)}
    examples |= {
        (_value_before(_line_before(text, m.start())), m.group("label"))
        for m in _STATEMENT.finditer(text)
        if m.group("tail") == " wherever"
    }
    return [m for m in stated_members(text) if m not in examples]


def new_members(source: str, known: str) -> list[Member]:
    """Members revealed in `source` that `known` (the method's current state) does not state yet."""
    have = set(stated_members(known))
    return [m for m in revealed_members(source) if m not in have]


def member_line(member: Member) -> str:
    """The one sentence the exception-lister stores per member, which its solver reads back."""
    value, label = member
    return f"{value} belongs to {label}."
