"""Reading answers out of a solver's output: the parse modes' answer region, text normalisation and numbers.

Parse modes (the answer region, before a grader's own extraction):
  answer      the text after the last `Answer:` (or `Final answer:`) on its line, or the next non-empty line when
              nothing follows the marker on its line; without a marker, the last non-empty line
  last_line   the last non-empty line
  first_line  the first non-empty line (base models that run on after their answer)
  full        the whole output
Every region is stripped of surrounding whitespace, `*` and backticks (markdown emphasis and code).
"""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass
from fractions import Fraction

from evoarena.benchmarks.files.number_words import first_word_number

PARSE_MODES = ("answer", "last_line", "first_line", "full")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

_MARKER = re.compile(r"(?:final\s+)?answer\s*:", re.I)
_WRAPPERS = "*`"


# --- the answer region ---------------------------------------------------------------------------------------------


def _clean(text: str) -> str:
    return text.strip(string.whitespace + _WRAPPERS)


def region(text: str, mode: str) -> str | None:
    """The part of `text` that `mode` selects (see the module docstring); None when it is empty."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    if mode == "full":
        picked = text
    elif mode == "first_line":
        picked = lines[0]
    elif mode == "last_line":
        picked = lines[-1]
    else:
        markers = list(_MARKER.finditer(text))
        if not markers:
            picked = lines[-1]
        else:
            after = text[markers[-1].end():]
            rest = [line for line in after.splitlines() if _clean(line)]
            first_line = after.split("\n", 1)[0]
            picked = first_line if _clean(first_line) else (rest[0] if rest else "")
    cleaned = _clean(picked)
    return cleaned or None


# --- text normalisation --------------------------------------------------------------------------------------------

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def normalize(text: str, drop_articles: bool = True) -> str:
    """Case-folded, punctuation removed (a `.` or `,` between digits is kept), articles dropped (optional), runs of
    whitespace collapsed: "The  Beatles!" -> "beatles"."""
    text = unicodedata.normalize("NFKC", text).casefold()
    out = []
    for i, ch in enumerate(text):
        if unicodedata.category(ch).startswith("P"):
            between_digits = 0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit()
            if not (ch in ".," and between_digits):
                out.append(" ")
                continue
        out.append(ch)
    text = "".join(out)
    if drop_articles:
        text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


# --- numbers -------------------------------------------------------------------------------------------------------

_NUMBER = re.compile(
    r"""(?<![\d.])
        (?P<sign>[-+\u2212])?
        (?P<int>\d{1,3}(?:,\d{3})+(?![\d])|\d+)?
        (?P<frac>\.\d+)?
        (?:[eE](?P<exp>[-+]?\d+))?
        (?:\s*/\s*(?P<den>\d+))?
        (?P<pct>\s*%)?""",
    re.X,
)


@dataclass(frozen=True)
class Number:
    """A number read from text: its exact value, whether it carried `%`, and the text it was read from."""

    value: Fraction
    percent: bool
    text: str


def first_number(text: str) -> Number | None:
    """The first number in `text`: `1,234.5`, `-3`, `2.5e3`, `3/4`, `45%` (thousands commas dropped, `%` noted), or
    a whole number in words (`seven`, `twenty-one`, `minus three`: number_words.py), whichever comes first."""
    words = first_word_number(text)
    for m in _NUMBER.finditer(text):
        if not (m.group("int") or m.group("frac")):
            continue
        if words is not None and words.start < m.start():
            break
        digits = (m.group("int") or "0").replace(",", "") + (m.group("frac") or "")
        exp = m.group("exp")
        value = Fraction(digits) * (Fraction(10) ** int(exp) if exp else 1)
        den = m.group("den")
        if den and int(den) != 0:
            value /= int(den)
        if m.group("sign") in ("-", "\u2212"):
            value = -value
        return Number(value, bool(m.group("pct")), m.group(0).strip())
    return None if words is None else Number(Fraction(words.value), False, words.text)
