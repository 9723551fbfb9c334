"""`labels-learner`: the `labels-student` solver that also plays HGM's proposer (evidence: mechanism).

As HGM's diagnosis it turns a failed ticket whose feedback names the expected label into one rule line the student
reads, `<expected label>: <the ticket's words>` (words of four letters or more, label names left out); the
improvement appends that line to the harness (`hgm_roles`). Feedback without an expected label gives no lesson."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evoarena.api import policy
from evoarena.benchmarks.labels.scripted import labels_student
from evoarena.models.base import GenParams, Message
from evoarena.scripted.hgm_roles import answer as hgm_answer
from evoarena.scripted.hgm_roles import is_hgm_prompt

_EXPECTED = re.compile(r"The expected label is ([^.\s]+)\.")
_TICKET = re.compile(r"^Ticket: (.+)\nLabels: (.+)$", re.M)
MIN_CUE = 4  # shortest word kept as a cue (shorter ones are mostly function words)


def cue_line(task: str, feedback: str) -> str | None:
    """The rule line for a failed ticket: its expected label and the ticket's words, else None."""
    expected, ticket = _EXPECTED.search(feedback), _TICKET.search(task)
    if expected is None or ticket is None:
        return None
    labels = {x.strip().lower() for x in ticket.group(2).split(",")}
    words = [w for w in dict.fromkeys(re.findall(r"[a-z]+", ticket.group(1).lower()))
             if len(w) >= MIN_CUE and w not in labels]
    return f"{expected.group(1)}: {', '.join(words)}" if words else None


@policy("labels-learner")
def labels_learner(messages: Sequence[Message], params: GenParams) -> str:
    if is_hgm_prompt(messages):
        return hgm_answer(messages, cue_line)
    return labels_student(messages, params)
