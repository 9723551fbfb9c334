"""The hidden rule and the seeded tickets of the `labels` benchmark (docs/benchmarks/labels.md).

A seed picks K support-ticket labels from a fixed pool, gives each label four cue words (two that fit its name,
two neutral words assigned at random, so the label names alone do not decide) and a priority order among the labels
(when a ticket holds cues of several labels, the highest-priority one wins). Tickets are short texts built from cue
phrases, shared filler and, sometimes, a decoy mention of another label's name. The rule is the whole grader: the
reference of every ticket is `Rule.classify` of its text.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from evoarena.benchmarks.generated import distinct

POOL: dict[str, tuple[str, ...]] = {
    "Billing": ("invoice", "refund", "overcharge", "payment"),
    "Technical": ("crash", "error", "freeze", "bug"),
    "Account": ("password", "login", "username", "lockout"),
    "Shipping": ("parcel", "courier", "delivery", "tracking"),
    "Sales": ("quote", "discount", "pricing", "upgrade"),
    "Security": ("phishing", "breach", "hacker", "malware"),
    "Hardware": ("battery", "screen", "charger", "keyboard"),
}
"""Every label a seed may pick, with the cue words that fit its name (two of them are drawn per seed)."""
NEUTRAL = ("app", "card", "portal", "profile", "voucher", "form", "widget", "dashboard", "address", "contract",
           "printer", "tablet", "newsletter", "badge")
"""Words of no fixed label: each seed assigns two of them to every label, against any naive reading."""
PHRASES = ("the {w} is a problem", "a question about the {w}", "something odd with the {w}",
           "I need help with the {w}", "the {w} again", "trouble with my {w}")
OPENERS = ("Hi.", "Hello.", "Good morning.", "Hey team.", "Dear support.")
FILLERS = ("Please help.", "This is urgent.", "Thanks in advance.", "It started on Monday.",
           "My colleague has it too.", "Any update soon?")
DECOYS = ("The {d} team sent me here.", "Not sure if this is for {d}.", "I asked {d} already.")
MIN_LABELS, MAX_LABELS = 2, len(POOL) - 1
_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class Rule:
    """A seed's hidden rule: the allowed labels (in the order the prompt lists them), each label's cue words, and the
    priority order that settles tickets with cues of several labels."""

    labels: tuple[str, ...]
    cues: dict[str, tuple[str, ...]]
    priority: tuple[str, ...]

    def classify(self, text: str) -> str | None:
        """The label of `text`: the highest-priority label with a cue word in it; None if it has no cue word."""
        words = set(_WORD.findall(text.lower()))
        for label in self.priority:
            if words & set(self.cues[label]):
                return label
        return None

    def text(self) -> str:
        """The rule written down as a good harness would: one `Label: cue, cue, …` line per label, then the priority
        line (the form the scripted `labels-student` reads)."""
        lines = [f"{label}: {', '.join(self.cues[label])}" for label in self.labels]
        return "\n".join([*lines, f"Priority: {' > '.join(self.priority)}"]) + "\n"


@dataclass(frozen=True)
class Item:
    """One ticket: its text, the label the rule gives it, and how it was built (`conflict`: cues of two labels;
    `decoy`: names a wrong label)."""

    text: str
    label: str
    cues: tuple[str, ...]
    conflict: bool
    decoy: str | None


def make_rule(seed: int, k: int) -> Rule:
    """The hidden rule of `seed` with `k` labels: different seeds give different labels, cues and priorities; the
    priority is never the order the labels are listed in."""
    r = random.Random(f"labels-rule:{seed}:{k}")
    labels = tuple(r.sample(sorted(POOL), k))
    neutral = r.sample(NEUTRAL, 2 * k)
    cues = {label: tuple(r.sample(POOL[label], 2)) + tuple(neutral[2 * i: 2 * i + 2])
            for i, label in enumerate(labels)}
    priority = labels
    while priority == labels:  # the listing order is never the priority, so the priority must be learned
        priority = tuple(r.sample(labels, k))
    return Rule(labels, cues, priority)


def _ticket(r: random.Random, cue_words: list[str], decoy: str | None) -> str:
    phrases = [r.choice(PHRASES).format(w=w) for w in cue_words]
    body = phrases[0][0].upper() + phrases[0][1:] + "".join(f", and {p}" for p in phrases[1:]) + "."
    parts = [r.choice(OPENERS)]
    if decoy is not None:
        parts.append(r.choice(DECOYS).format(d=decoy))
    parts += [body, r.choice(FILLERS)]
    return " ".join(parts)


def _draw(r: random.Random, rule: Rule, target: str, conflict: float, decoy: float) -> Item:
    """One ticket whose rule label is `target`: one or two of its cues; with probability `conflict` (if a label of
    lower priority exists) also a cue of that label; with probability `decoy` a mention of another label's name."""
    words = r.sample(rule.cues[target], r.choice((1, 2)))
    lower = rule.priority[rule.priority.index(target) + 1:]
    is_conflict = bool(lower) and r.random() < conflict
    if is_conflict:
        words.append(r.choice(rule.cues[r.choice(lower)]))
    r.shuffle(words)
    others = [label for label in rule.labels if label != target]
    name = r.choice(others) if r.random() < decoy else None
    return Item(_ticket(r, words, name), target, tuple(words), is_conflict, name)


def generate(rule: Rule, seed: int, n: int, conflict: float, decoy: float) -> list[Item]:
    """`n` tickets with distinct texts, their rule labels cycling through the labels (so every split is balanced up
    to rounding), in a seeded order."""
    r = random.Random(f"labels-items:{seed}:{len(rule.labels)}")
    return distinct(lambda k: _draw(r, rule, rule.labels[k % len(rule.labels)], conflict, decoy),
                    lambda item: item.text, n, f"tickets for {len(rule.labels)} labels", tries=20_000)
