"""`labels-student`: a scripted solver for mechanism tests of the `labels` benchmark (evidence: mechanism).

It reads a rule from its context (everything before the last ticket): lines `Label: cue, cue, …` for allowed labels
and a line `Priority: A > B > …`. A ticket whose cue words that rule covers gets the rule's label (the
highest-priority one, or the first listed when no priority is written). Without a usable rule it makes the plausible
zero-shot error: the label whose name the ticket mentions most (a decoy), else the first label listed. So it scores
low on a bare harness and 1.0 once the harness holds the benchmark's rule (`Rule.text()`).
As reflector (a prompt ending in "Reflection:") it has nothing to add.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evoarena.api import policy
from evoarena.models.base import GenParams, Message

_TICKET = re.compile(r"^Ticket: (.+)\nLabels: (.+)$", re.M)
_WORD = re.compile(r"[a-z]+")


def read_rule(context: str, labels: Sequence[str]) -> tuple[dict[str, set[str]], list[str]]:
    """The cue words per allowed label and the priority order written in `context` (empty where absent)."""
    by_lower = {label.lower(): label for label in labels}
    cues: dict[str, set[str]] = {}
    priority: list[str] = []
    for line in context.splitlines():
        head, sep, tail = line.strip(" -*#\t").partition(":")
        key = head.strip().lower()
        if not sep:
            continue
        if key == "priority":
            priority = [by_lower[p] for p in _WORD.findall(tail.lower()) if p in by_lower]
        elif key in by_lower:
            cues.setdefault(by_lower[key], set()).update(_WORD.findall(tail.lower()))
    return cues, priority


def classify(ticket: str, labels: Sequence[str], context: str) -> str:
    """The student's answer for `ticket` given the rule (if any) that `context` writes down."""
    cues, priority = read_rule(context, labels)
    words = set(_WORD.findall(ticket.lower()))
    hits = [label for label in (priority + [x for x in labels if x not in priority]) if cues.get(label, set()) & words]
    if hits:
        return hits[0]
    counts = {label: len(re.findall(rf"\b{re.escape(label)}\b", ticket, flags=re.I)) for label in labels}
    return max(labels, key=lambda label: counts[label])  # ties: the first listed


@policy("labels-student")
def labels_student(messages: Sequence[Message], params: GenParams) -> str:
    text = "\n\n".join(m.content for m in messages)
    if text.rstrip().endswith("Reflection:"):
        return "I am not sure what went wrong."
    tickets = list(_TICKET.finditer(text))
    if not tickets:
        return "I do not see a ticket."
    last = tickets[-1]
    labels = [x.strip() for x in last.group(2).split(",")]
    return f" {classify(last.group(1), labels, text[: last.start()])}"
