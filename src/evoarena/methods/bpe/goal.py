"""The task an ALFWorld-like episode states ("Your task is to: put a hot mug on the dining table."): its type (the six
families pick / look / clean / heat / cool / pick-two), the thing to handle and the receptacle it must end in or on.
Read from evoarena's `tw-household` wording and ALFWorld's ("heat some egg and put it in garbagecan", "find two
pencil and put them in drawer", "examine the book with the desklamp")."""

from __future__ import annotations

import re
from dataclasses import dataclass

TYPES = ("pick", "look", "clean", "heat", "cool", "pick-two")
_TASK = re.compile(r"Your task is to:\s*(.+?)(?:\.\s|\.$|\n|$)", re.I)
_ART = r"(?:a |an |the |some |two )?"
_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(rx, re.I)) for kind, rx in [
    ("look", rf"^(?:look at|examine) {_ART}(?P<thing>.+?) (?:under|with) {_ART}(?:desk ?lamp|floor ?lamp|lamp)"),
    ("pick-two", rf"^(?:put|find) two (?P<thing>.+?) (?:and put them )?(?:in|on|into|in/on) {_ART}(?P<goal>.+)$"),
    ("clean", rf"^put {_ART}clean (?P<thing>.+?) (?:in|on|into|in/on) {_ART}(?P<goal>.+)$"),
    ("heat", rf"^put {_ART}hot (?P<thing>.+?) (?:in|on|into|in/on) {_ART}(?P<goal>.+)$"),
    ("cool", rf"^put {_ART}(?:cool|cold) (?P<thing>.+?) (?:in|on|into|in/on) {_ART}(?P<goal>.+)$"),
    ("clean", rf"^clean {_ART}(?P<thing>.+?) and put it (?:in|on|into|in/on) {_ART}(?P<goal>.+)$"),
    ("heat", rf"^heat {_ART}(?P<thing>.+?) and put it (?:in|on|into|in/on) {_ART}(?P<goal>.+)$"),
    ("cool", rf"^cool {_ART}(?P<thing>.+?) and put it (?:in|on|into|in/on) {_ART}(?P<goal>.+)$"),
    ("pick", rf"^put {_ART}(?P<thing>.+?) (?:in|on|into|in/on) {_ART}(?P<goal>.+)$"),
])


@dataclass(frozen=True)
class Goal:
    """The task sentence, its family (None when it is not an ALFWorld-like task), the thing and the receptacle."""

    text: str
    kind: str | None
    thing: str | None
    place: str | None


def singular(word: str) -> str:
    """ALFWorld's plural thing names as singular ("soap bars" -> "soap bar", "boxes" -> "box")."""
    if word.endswith("es") and word[:-2].endswith(("s", "x", "ch", "sh")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def goal(text: str) -> Goal:
    """The goal an episode's opening text states (the whole text when it has no "Your task is to:")."""
    found = _TASK.search(text or "")
    sentence = (found.group(1) if found else (text or "").strip().splitlines()[0] if text and text.strip() else "")
    sentence = sentence.strip().rstrip(".")
    for kind, pattern in _FORMS:
        m = pattern.match(sentence)
        if m is not None:
            thing = " ".join(m.group("thing").lower().split())
            if kind == "pick-two":
                thing = singular(thing)
            place = " ".join(m.group("goal").lower().split()) if "goal" in m.groupdict() else None
            return Goal(sentence, kind, thing, place)
    return Goal(sentence, None, None, None)


def family(source_id: str) -> str:
    """A task's family from its source id: `tw-household/heat-123` -> heat; otherwise the source without its seed
    (`maze-7` -> maze)."""
    head = source_id.rsplit("-", 1)[0] if source_id.rsplit("-", 1)[-1].isdigit() else source_id
    return head.rsplit("/", 1)[-1]
