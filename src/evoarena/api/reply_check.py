"""The one check of an update role's free-text reply, shared by the role probes and the methods' in-run parsers: an
echo of the prompt or of its template's own text, a refusal or request for input, a duplicate of the text it was
asked to improve, a list of repeated items. A flawed reply is rejected with its kind (`ctx.reject(kind=...)`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

FLAW_KINDS = ("echo", "refused", "duplicate", "repeated")
"""The kinds of a flawed reply; a reply the method's parser refuses is `malformed`."""
REJECTION_KINDS = ("malformed", *FLAW_KINDS)
"""The kinds a rejected reply is recorded with (`rejected_output`'s `kind`)."""

ECHO_RUN = 8
"""Words in a row a reply shares with its template's own text (or the prompt) to count as copied from it."""
ECHO_PROMPT_SHARE = 0.5
"""A reply that holds this share of the prompt's runs of `ECHO_RUN` words returns the prompt."""
REPEAT_SHARE = 0.5
"""A list whose items repeat an earlier item at this share or more (of at least `REPEAT_MIN` items) is repeated."""
REPEAT_MIN = 3

_WORDS = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_REQUEST = re.compile(
    r"\b(?:please|kindly|could you|can you|would you)(?: please)?\s+(?:provide|share|give|send|paste|supply|clarify|"
    r"specify)(?: me)?(?: with)?(?:\s+(?:the|your|more|some|any|a|an|additional|specific|further))?(?:\s+[a-z]+)?"
    r"\s+(?:input|inputs|question|questions|task|tasks|details|information|instruction|instructions|text|data|"
    r"example|examples|context|feedback|problem|problems|prompt|content|code|reflection)\b"
)
_NEED = re.compile(r"\bi (?:need|would need|require)(?: some)? (?:more|the|additional|further) (?:information|details|"
                   r"input|inputs|context)\b")
REFUSALS = ("i'm sorry", "i am sorry", "as an ai", "i cannot", "i can't", "i am unable", "i'm unable")
_HEAD = 200
"""Characters at the start of a reply where a refusal or a request for input is looked for."""


@dataclass(frozen=True)
class Flaw:
    """Why a reply is not an update: its kind (one of `FLAW_KINDS`) and a one-line reason."""

    kind: str
    reason: str


def words(text: str) -> list[str]:
    """The lower-cased words and numbers of `text`."""
    return _WORDS.findall(text.lower())


def _runs(ws: Sequence[str], n: int = ECHO_RUN) -> set[tuple[str, ...]]:
    return {tuple(ws[i : i + n]) for i in range(len(ws) - n + 1)}


def refusal(text: str) -> bool:
    """A reply that refuses or asks for input instead of doing the job ("Certainly! Please provide the inputs for
    the new task.", "I'm sorry, ..."): looked for at its start only, so an instruction that asks the solver to
    "provide the final answer" is none."""
    head = " ".join(text.lower().split())[:_HEAD]
    return any(p in head for p in REFUSALS) or bool(_REQUEST.search(head) or _NEED.search(head))


def echo(text: str, *, template: Iterable[str] = (), prompt: str = "") -> bool:
    """Whether `text` copies `ECHO_RUN` words in a row of its template's own text (`template`: its literal parts,
    not the values filled in), or returns the prompt (`ECHO_PROMPT_SHARE` of its runs)."""
    got = _runs(words(text))
    if not got:
        return False
    if any(got & _runs(words(part)) for part in template):
        return True
    if prompt:
        asked = _runs(words(prompt))
        return bool(asked) and len(got & asked) >= ECHO_PROMPT_SHARE * len(asked)
    return False


def normalised(text: str) -> str:
    return " ".join(text.split())


def duplicate(text: str, parent: str) -> bool:
    """`text` equals `parent`, whitespace normalised."""
    return normalised(text) == normalised(parent)


def repeat_share(items: Sequence[str]) -> float:
    """The share of `items` that repeat an earlier one (case and whitespace normalised)."""
    keys = [normalised(i).lower() for i in items if i.strip()]
    return 1 - len(set(keys)) / len(keys) if keys else 0.0


def repeated(items: Sequence[str]) -> bool:
    """At least `REPEAT_MIN` items, of which `REPEAT_SHARE` or more repeat an earlier one."""
    return sum(1 for i in items if i.strip()) >= REPEAT_MIN and repeat_share(items) >= REPEAT_SHARE


def flaw(
    text: str, *, template: Iterable[str] = (), prompt: str = "", parent: str | None = None,
    items: Sequence[str] | None = None,
) -> Flaw | None:
    """The first flaw of an update reply's text, or None: a refusal or request for input, an echo (of `template`'s
    own text or of `prompt`), a duplicate of `parent`, repeated `items` (the reply's bullets or lines)."""
    if refusal(text):
        return Flaw("refused", "a refusal or request for input, not an update")
    if echo(text, template=template, prompt=prompt):
        return Flaw("echo", "the reply copies its prompt's own text")
    if parent is not None and duplicate(text, parent):
        return Flaw("duplicate", "the reply repeats the text it was asked to improve")
    if items is not None and repeated(items):
        return Flaw("repeated", f"{repeat_share(items):.0%} of its items repeat an earlier one")
    return None
