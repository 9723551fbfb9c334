"""A deterministic check of a new prompt for the paper's qualitative failure, a flip of label semantics (ProTeGi
§3.4: wrong feedback can turn a detector into a narrower task or invert what a label means). Given the task's labels
(the distinct references of the train split), it compares a child prompt with its parent:

- **missing**: a label the parent names (a whole word, any case) that the child no longer names;
- **flipped**: a word the parent ties to one label that the child ties to another. A word is tied to a label by a
  statement that names exactly that one label: a line that opens with `<label>:` (a rule line) as a whole, else
  each clause (cut at . , ; ! ? and line ends) — so "answer Yes if the claim is true, No if it is false" ties
  `claim`/`true` to Yes and `false` to No, and the same sentence with Yes and No swapped is a flip.

Limits: lexical only. A flip said in other words (synonyms, "the opposite of", a negation such as "not Billing") is
not seen, a statement naming two labels ties nothing, and a reworded clause that merely moves a word next to the
other label counts as a flip. It is a screen that counts candidates for a reader to look at, not a judge; the
method never refuses a candidate for it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

_WORD = re.compile(r"[a-z][a-z'-]+")
_CLAUSE = re.compile(r"[.,;!?]+(?:\s|$)")
_STOPWORDS = (
    "the a an and or of to in on for with as is are be it its this that these those if then else when was not "
    "no yes only one each any all your you label labels answer reply with from by at into than which who what "
    "should must can may will")
STOP = frozenset(_STOPWORDS.split())
"""Words that tie nothing (function words and the task's own vocabulary of answering)."""


class Flip(BaseModel):
    """A word tied to `before` in the parent and to `after` in the child."""

    model_config = ConfigDict(frozen=True)

    word: str
    before: str
    after: str


class LabelCheck(BaseModel):
    """What the check found in one child prompt: labels it dropped and words whose label it changed."""

    model_config = ConfigDict(frozen=True)

    missing: list[str] = []
    flipped: list[Flip] = []

    @property
    def flip(self) -> bool:
        return bool(self.missing or self.flipped)


def names(text: str, label: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(label)}(?![\w-])", text, re.I) is not None


def statements(text: str, labels: Sequence[str]) -> list[str]:
    """A rule line (`<label>: …`) whole, every other line cut into clauses."""
    heads = {x.lower() for x in labels}
    out: list[str] = []
    for line in text.splitlines():
        head, sep, _ = line.strip(" -*#\t").partition(":")
        if sep and head.strip().lower() in heads:
            out.append(line)
        else:
            out += [c for c in _CLAUSE.split(line) if c.strip()]
    return out


def ties(text: str, labels: Sequence[str]) -> dict[str, set[str]]:
    """Each content word of a statement naming exactly one label, to the labels it is tied to."""
    lows = {x.lower() for x in labels}
    out: dict[str, set[str]] = {}
    for s in statements(text, labels):
        named = [x for x in labels if names(s, x)]
        if len(named) != 1:
            continue
        for w in _WORD.findall(s.lower()):
            if w not in STOP and w not in lows:
                out.setdefault(w, set()).add(named[0])
    return out


def label_check(parent: str, child: str, labels: Sequence[str]) -> LabelCheck:
    """The child's dropped labels and flipped words relative to its parent (nothing without at least two labels)."""
    if len(labels) < 2:
        return LabelCheck()
    missing = [x for x in labels if names(parent, x) and not names(child, x)]
    before, after = ties(parent, labels), ties(child, labels)
    flipped = [Flip(word=w, before=next(iter(b)), after=next(iter(after[w])))
               for w, b in sorted(before.items())
               if len(b) == 1 and len(after.get(w, set())) == 1 and after[w] != b]
    return LabelCheck(missing=missing, flipped=flipped)
