"""`labels-learner`: the `labels-student` solver that also plays HGM's and Meta-Harness's proposer (evidence:
mechanism).

As HGM's diagnosis it turns a failed ticket whose feedback names the expected label into one rule line the student
reads, `<expected label>: <the ticket's words>` (words of four letters or more, label names left out); the
improvement appends that line to the harness (`hgm_roles`). Feedback without an expected label gives no lesson. As
Meta-Harness's proposer it reads every ticket of the best candidate's traces and writes, per label, the words that
only that label's tickets hold (`cue_lines`, `meta_harness_roles`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evoarena.api import policy
from evoarena.benchmarks.labels.scripted import labels_student
from evoarena.models.base import GenParams, Message
from evoarena.scripted.hgm_roles import answer as hgm_answer
from evoarena.scripted.hgm_roles import is_hgm_prompt
from evoarena.scripted.meta_harness_roles import answer as meta_harness_answer
from evoarena.scripted.meta_harness_roles import is_meta_harness_prompt

_EXPECTED = re.compile(r"The expected label is ([^.\s]+)\.")
_LABEL = re.compile(r"(?:The expected label is|^Correct:) ([^.\s]+)\.")
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


def cue_lines(traces: Sequence[tuple[str, str]]) -> list[str]:
    """Rule lines drawn from many graded tickets at once (what Meta-Harness's proposer reads): per label its
    feedback names (expected or correct), the words of its tickets that no ticket of another label holds."""
    words: dict[str, set[str]] = {}
    for task, feedback in traces:
        label, ticket = _LABEL.search(feedback), _TICKET.search(task)
        if label is not None and ticket is not None:
            names = {x.strip().lower() for x in ticket.group(2).split(",")}
            found = {w for w in re.findall(r"[a-z]+", ticket.group(1).lower()) if len(w) >= MIN_CUE and w not in names}
            words.setdefault(label.group(1), set()).update(found)
    lines = []
    for name, mine in sorted(words.items()):
        theirs = set().union(*(w for other, w in words.items() if other != name))
        if mine - theirs:
            lines.append(f"{name}: {', '.join(sorted(mine - theirs))}")
    return lines


@policy("labels-learner")
def labels_learner(messages: Sequence[Message], params: GenParams) -> str:
    if is_hgm_prompt(messages):
        return hgm_answer(messages, cue_line)
    if is_meta_harness_prompt(messages):  # the rule is hidden: it knows no cue without traces
        return meta_harness_answer(messages, cue_lines)
    return labels_student(messages, params)
