"""Role probes: canned update situations a method sends its update roles before a run, to see whether a model can
play the role at all (a reply the method's own parser adopts, and a minimal sign of use)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from evoarena.api.context import Reply
from evoarena.api.reply_check import flaw, refusal


@dataclass(frozen=True)
class ProbeExample:
    """A tiny fixed update situation: a task, the solver's wrong output and answer, the grader's feedback on it,
    what running it showed (where answers run), and a one-line lesson a good reflection would draw (what probes of
    downstream roles, such as a curator or patcher, are handed as the upstream role's reply)."""

    id: str
    task: str
    output: str
    answer: str
    feedback: str
    lesson: str
    observation: str = ""


@dataclass(frozen=True)
class Verdict:
    """A probe reply judged: adopted by the method's parser (`well_formed`), and showing a sign of use (`usable`)."""

    well_formed: bool
    usable: bool
    reason: str = ""


def refused(reason: str) -> Verdict:
    """The method's parser refused the reply."""
    return Verdict(False, False, reason)


def judged(usable: bool, why_not: str) -> Verdict:
    """A parsed reply: usable, or not with the reason."""
    return Verdict(True, usable, "" if usable else why_not)


@dataclass(frozen=True)
class Probe:
    """One canned call: `prompt` (rendered from the method's own template) sent as one user message to `role`;
    `check` judges the reply with the method's own strict parser."""

    name: str
    role: str
    prompt: str
    check: Callable[[Reply], Verdict]
    max_tokens: int | None = None
    stop: tuple[str, ...] | None = None

    def judge(self, reply: Reply) -> Verdict:
        """`check`'s verdict, unusable when the reply fails the shared check (`reply_check.flaw`): a refusal or
        request for input, or the probe's prompt returned."""
        verdict = self.check(reply)
        bad = flaw(reply.text, prompt=self.prompt) if verdict.usable else None
        return verdict if bad is None else Verdict(verdict.well_formed, False, bad.reason)


GENERIC_EXAMPLES: tuple[ProbeExample, ...] = (
    ProbeExample(
        id="probe-sum",
        task="Ann has 12 apples. She gave away 5 apples and then bought 3 more. How many apples does she have now?",
        output="12 + 5 + 3 = 20. The answer is 20.",
        answer="20",
        feedback="Incorrect: the expected answer is 10. Apples given away must be subtracted, not added.",
        lesson="Subtract what is given away and add what is bought, in the order the problem states.",
    ),
    ProbeExample(
        id="probe-count",
        task="How many times does the word 'cat' appear in: cat, dog, cat, bird, cat?",
        output="The word 'cat' appears in the list: cat, cat. The answer is 2.",
        answer="2",
        feedback="Incorrect: the expected answer is 3. Every occurrence of the word counts, including the last one.",
        lesson="Count every occurrence of the word, to the end of the list.",
    ),
)
"""The probe examples of a benchmark that has none of its own (`Benchmark.probe_examples`)."""


_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}|\d+")
_STOP = frozenset((
    "that", "this", "with", "from", "what", "when", "your", "have", "were", "they", "them", "then", "than", "into",
    "also", "each", "only", "must", "should", "would", "could", "answer", "question", "output", "feedback",
    "correct", "incorrect", "expected",
))


def content_stems(text: str) -> set[str]:
    """Lower-cased 4-letter stems of the words of `text` (4+ letters, no common words) and its numbers."""
    words = (w.lower() for w in _WORD.findall(text))
    return {w if w.isdigit() else w[:4] for w in words if w.isdigit() or w not in _STOP}


def mentions(reply: str, sources: Iterable[str], known: Iterable[str] = ()) -> bool:
    """Whether `reply` shares a content word stem with `sources` that `known` does not hold (the feedback's news, not
    the words it shares with the task): a minimal sign the reply read them."""
    news = set().union(*(content_stems(s) for s in sources)) - set().union(*(content_stems(k) for k in known))
    return bool(content_stems(reply) & news)


def non_answer(reply: str) -> bool:
    """A reply that asks for input or refuses instead of doing the job (`reply_check.refusal`)."""
    return refusal(reply)
