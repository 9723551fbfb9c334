"""Repeated and empty bullets dropped from an exported skill's Markdown: a playbook whose curator added the same lesson
many times exports each lesson once. Two bullets repeat when their words match ignoring case, spacing, a final full
stop and a trailing count (`(helpful 2, harmful 0)`, `** Count: 3`); the first one is kept, with its counts."""

from __future__ import annotations

import re
from dataclasses import dataclass

_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_COUNTS = re.compile(r"(?:\s*\((?:\s*[A-Za-z_]+\s*[:=]?\s*\d+\s*,?)+\)|\s*\*\*\s*count\s*:\s*\d+)\s*$", re.I)
_HEADING = re.compile(r"^#{1,6}\s")


@dataclass(frozen=True)
class Deduplicated:
    """The text without repeated or empty bullets, how many of each were dropped, and how many bullets are left."""

    text: str
    repeated: int
    empty: int
    kept: int


def bullet_key(content: str) -> str:
    """What two bullets share when they say the same thing: the words without a trailing count, case or spacing."""
    words = _COUNTS.sub("", content).strip().rstrip(".").casefold()
    return " ".join(words.split())


def deduplicate(text: str) -> Deduplicated:
    """`text` with each bullet that repeats an earlier one (anywhere in the text), or says nothing, dropped together
    with its continuation lines; a heading left with none of the bullets it had is dropped too."""
    lines = text.splitlines()
    seen: set[str] = set()
    keep = [True] * len(lines)
    repeated = empty = kept = 0
    dropping: int | None = None  # the indentation of the bullet being dropped, while its continuation lines follow
    for i, line in enumerate(lines):
        m = _BULLET.match(line)
        if dropping is not None and not m and line.strip() and len(line) - len(line.lstrip()) > dropping:
            keep[i] = False
            continue
        dropping = None
        if not m:
            continue
        key = bullet_key(m.group(2))
        if key and key not in seen:
            seen.add(key)
            kept += 1
            continue
        keep[i], dropping = False, len(m.group(1))
        repeated += bool(key)
        empty += not key
    _drop_emptied_headings(lines, keep)
    out = "\n".join(line for line, k in zip(lines, keep, strict=True) if k)
    return Deduplicated(re.sub(r"\n{3,}", "\n\n", out) + ("\n" if text.endswith("\n") else ""), repeated, empty, kept)


def _drop_emptied_headings(lines: list[str], keep: list[bool]) -> None:
    """Unmark a heading whose section had bullets and now has none left (its other lines stay)."""
    heads = [i for i, line in enumerate(lines) if _HEADING.match(line)]
    for n, h in enumerate(heads):
        end = heads[n + 1] if n + 1 < len(heads) else len(lines)
        section = range(h + 1, end)
        had = [j for j in section if _BULLET.match(lines[j])]
        if had and not any(keep[j] for j in had) and not any(keep[j] and lines[j].strip() for j in section
                                                              if j not in had):
            keep[h] = False
