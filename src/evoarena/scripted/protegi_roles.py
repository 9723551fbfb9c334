"""`protegi-labels`: the `labels-student` solver that also plays ProTeGi's optimizer on the `labels` benchmark
(evidence: mechanism).

As critic (the `gradient.md` prompt) it reads the error examples and writes one reason naming, per expected label,
the ticket words only that label's errors hold (the templates' own words and the label names left out) as rule
lines, `Label: word, word`. As editor (`edit.md`) it appends the rule lines the critique names to the current
prompt, which the student then reads. As paraphraser (`paraphrase.md`) it rewords the first sentence one of four
ways, chosen by the call's seed, and keeps every line after it: a paraphrase changes no rule. So feedback search can
reach the rule and paraphrase search cannot (the equal-budget arm stays at the bare prompt's score)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evoarena.api import policy
from evoarena.benchmarks.labels.generator import DECOYS, FILLERS, OPENERS, PHRASES
from evoarena.benchmarks.labels.scripted import labels_student
from evoarena.models.base import GenParams, Message

CRITIC = "I'm trying to write a zero-shot classifier prompt."
EDITOR = "I'm trying to write a zero-shot classifier.\n"
PARAPHRASER = "Generate a variation of the following instruction while keeping the semantic meaning."
_EXAMPLE = re.compile(r'## Example \d+\nText: "Ticket: (.*?)\nLabels: (.*?)"\nLabel: (\S+)\nPrediction:', re.S)
_RULE = re.compile(r"^([A-Z][a-z]+): ([a-z]+(?:, [a-z]+)*)$", re.M)
_PROMPT = re.compile(r'My current prompt is:\n"(.*?)"\n\nBut ', re.S)
_WORD = re.compile(r"[a-z]+")
TEMPLATE_WORDS = frozenset(_WORD.findall(" ".join(PHRASES + FILLERS + OPENERS + DECOYS).lower())) | {"and"}
REWORDINGS = ("Sort each support ticket into exactly one of the labels listed with it.",
              "Assign every support ticket to exactly one of its listed labels.",
              "Put each support ticket under exactly one of the labels listed with it.",
              "Choose exactly one of the listed labels for each support ticket.")


def reason(prompt: str) -> str:
    """One critique: per expected label, the words only its error tickets hold, as rule lines."""
    words: dict[str, set[str]] = {}
    for ticket, listed, label in _EXAMPLE.findall(prompt):
        names = {x.strip().lower() for x in listed.split(",")}
        words.setdefault(label, set()).update(w for w in _WORD.findall(ticket.lower())
                                              if w not in TEMPLATE_WORDS and w not in names)
    lines = []
    for label, mine in sorted(words.items()):
        theirs = set().union(*(w for other, w in words.items() if other != label))
        if mine - theirs:
            lines.append(f"{label}: {', '.join(sorted(mine - theirs))}")
    if not lines:
        return "<START>it does not say which words mark each label<END>"
    return "<START>it does not say which words mark each label:\n" + "\n".join(lines) + "\n<END>"


def rewrite(prompt: str) -> str:
    """The current prompt with the rule lines the critique names appended (those already there left out)."""
    found = _PROMPT.search(prompt)
    current = found.group(1).rstrip() if found else ""
    problem = prompt.split("the problem with this prompt is that", 1)[-1]
    lines = [m.group(0) for m in _RULE.finditer(problem) if m.group(0) not in current]
    return f"<START>{current}\n" + "\n".join(lines) + "<END>" if lines else "<START>" + current + "<END>"


def paraphrase(prompt: str, seed: int | None) -> str:
    text = prompt.split("Input: ", 1)[-1].rsplit("\n\nOutput:", 1)[0].strip()
    first, _, rest = text.partition("\n")
    head = first.split(". ", 1)
    tail = head[1] if len(head) > 1 else ""
    new = REWORDINGS[(seed or 0) % len(REWORDINGS)]
    if new == head[0] + ".":
        new = REWORDINGS[((seed or 0) + 1) % len(REWORDINGS)]
    return " ".join(x for x in (new, tail) if x) + (f"\n{rest}" if rest else "")


@policy("protegi-labels")
def protegi_labels(messages: Sequence[Message], params: GenParams) -> str:
    prompt = messages[-1].content
    if CRITIC in prompt:
        return reason(prompt)
    if EDITOR in prompt:
        return rewrite(prompt)
    if PARAPHRASER in prompt:
        return paraphrase(prompt, params.seed)
    return labels_student(messages, params)
