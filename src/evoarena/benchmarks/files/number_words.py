"""Whole numbers written in English words, for the `numeric` grader: `seven`, `twenty-one`, `one hundred and five`,
`two thousand three hundred`, `minus three` (any case). Not read: fractions and decimals in words (`half`, `three
point five` is no number), ordinals (`third`), `a hundred`, digits mixed with words (`3 million` reads 3), `dozen`."""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNITS = {w: i for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"])}
_TEENS = {w: 10 + i for i, w in enumerate(
    ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"])}
_TENS = {w: 10 * (i + 2) for i, w in enumerate(
    ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"])}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_WORD = "|".join(sorted([*_UNITS, *_TEENS, *_TENS, "hundred", *_SCALES], key=len, reverse=True))
_PHRASE = re.compile(rf"(?<![\w-])(?:(?:minus|negative)\s+)?(?:{_WORD})(?:(?:\s+and\s+|[\s-]+)(?:{_WORD}))*(?![\w-])",
                     re.I)
_DECIMAL = re.compile(r"\s+point\b", re.I)
_TOKEN = re.compile(rf"minus|negative|and|{_WORD}", re.I)


@dataclass(frozen=True)
class WordNumber:
    """A number read from words: its value, where it starts in the text and the words it was read from."""

    value: int
    start: int
    text: str


def _read(tokens: list[tuple[str, int, int]]) -> tuple[int, int] | None:
    """(value, number of tokens used) of the longest well-formed number at the start of `tokens`, or None."""
    total = current = 0
    last = ""  # the kind of the previous word: unit, teen, tens, hundred, scale, and
    used = 0
    scale_cap = 10**15
    for i, (word, _, _) in enumerate(tokens):
        if word == "and":
            if last not in ("hundred", "scale"):
                break
            last = "and"
            continue
        if word in _UNITS:
            if last not in ("", "tens", "hundred", "scale", "and") or (word == "zero" and last):
                break
            current += _UNITS[word]
            kind = "unit"
        elif word in _TEENS or word in _TENS:
            if last not in ("", "hundred", "scale", "and") or current % 100:
                break
            current += _TEENS.get(word) or _TENS[word]
            kind = "teen" if word in _TEENS else "tens"
        elif word == "hundred":
            if last not in ("unit", "teen") or current >= 100 or current == 0:
                break
            current *= 100
            kind = "hundred"
        else:
            scale = _SCALES[word]
            if last not in ("unit", "teen", "tens", "hundred") or scale >= scale_cap or current == 0:
                break
            total += current * scale
            current, scale_cap = 0, scale
            kind = "scale"
        last = kind
        used = i + 1
    return (total + current, used) if used else None


def first_word_number(text: str) -> WordNumber | None:
    """The first number written in words in `text` (see the module docstring), or None."""
    for m in _PHRASE.finditer(text):
        tokens = [(t.group(0).lower(), t.start(), t.end()) for t in _TOKEN.finditer(m.group(0))]
        sign = 1
        if tokens[0][0] in ("minus", "negative"):
            sign, tokens = -1, tokens[1:]
        got = _read(tokens)
        if got is None:
            continue
        value, used = got
        if used == len(tokens) and _DECIMAL.match(text, m.end()):
            return None  # `three point five`: a decimal in words is not read, rather than read as 3 or 5
        start = m.start() if sign < 0 else m.start() + tokens[0][1]
        end = m.start() + tokens[used - 1][2]
        return WordNumber(sign * value, start, text[start:end])
    return None
