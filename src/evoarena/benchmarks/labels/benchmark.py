"""`labels`: support tickets classified by a hidden, seeded rule — the text-classification stand-in for the
Meta-Harness feedback-access study (issue 14; docs/benchmarks/labels.md)."""

from __future__ import annotations

import hashlib
import random
import re
from typing import Any

from pydantic import Field

from evoarena.api import Benchmark, Feedback, Parsed, Split, Task, TaskView, benchmark
from evoarena.benchmarks.generated import seed_param, size_param
from evoarena.benchmarks.labels.generator import MAX_LABELS, MIN_LABELS, Rule, generate, make_rule
from evoarena.codec import to_plain
from evoarena.models.base import GenParams

SPLITS: tuple[Split, ...] = ("train", "val", "test")
_PREFIXED = re.compile(r"\blabel\s*:\s*([^\n]*)", re.IGNORECASE)
_EDGES = " \t*_`'\".,;:!()[]"


def _quote(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


@benchmark("labels")
class LabelsBenchmark(Benchmark):
    """Short support tickets, each with one label out of `labels` (2–6) given by a hidden rule the seed draws: cue
    words per label (two that fit the label's name, two neutral ones) and a priority order for tickets with cues of
    several labels. Splits are disjoint by ticket text."""

    class Params(Benchmark.Params):
        seed: int = seed_param()
        n_train: int = size_param("train", 10)
        n_val: int = size_param("val", 5)
        n_test: int = size_param("test", 5)
        labels: int = Field(4, ge=MIN_LABELS, le=MAX_LABELS, description="K, the number of classes.")
        conflict: float = Field(0.3, ge=0, le=1, description="Chance that a ticket also holds a cue of a "
                                "lower-priority label (none for the lowest label, so about 0.3·(K−1)/K of tickets).")
        decoy: float = Field(0.15, ge=0, le=1, description="Chance that a ticket mentions a wrong label's "
                                                               "name.")

    params: Params

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.rule: Rule = make_rule(self.params.seed, self.params.labels)

    def generate(self) -> list[Task]:
        """Distinct tickets, cut into train, val and test in that order, each split in a seeded order (its position
        says nothing of the label). `source_id` is a digest of the text, so no text is on two sides of the split."""
        p = self.params
        sizes = [getattr(p, f"n_{s}") for s in SPLITS]
        items = generate(self.rule, p.seed, sum(sizes), p.conflict, p.decoy)
        order = random.Random(f"labels-order:{p.seed}")
        tasks: list[Task] = []
        start = 0
        for split, size in zip(SPLITS, sizes, strict=True):
            chunk = items[start: start + size]
            order.shuffle(chunk)
            for i, item in enumerate(chunk):
                digest = hashlib.sha256(item.text.encode("utf-8")).hexdigest()[:10]
                meta = {"cues": list(item.cues), "conflict": item.conflict, "decoy": item.decoy}
                tasks.append(Task(f"{split}-{i:03d}", split, f"t{digest}", self.prompt(item.text), item.label, meta))
            start += size
        return tasks

    def prompt(self, text: str) -> str:
        """The task text: the ticket and the allowed labels (the solver must pick one of them)."""
        return f"Ticket: {text}\nLabels: {', '.join(self.rule.labels)}"

    def parse(self, text: str) -> Parsed:
        """One allowed label, case-insensitively: the whole output, the text after the last `Label:`, or the last
        non-empty line (surrounding quotes, markup and punctuation ignored). Anything else is a parse error."""
        allowed = {label.lower(): label for label in self.rule.labels}
        hint = f"expected one of {', '.join(self.rule.labels)} alone, as 'Label: X', or alone on the last line"
        if not text.strip():
            return Parsed(None, f"empty output; {hint}")
        prefixed = _PREFIXED.findall(text)
        if prefixed:
            value = prefixed[-1].strip(_EDGES)
            if value.lower() in allowed:
                return Parsed(allowed[value.lower()])
            return Parsed(None, f"'Label:' is followed by {_quote(value)}, not an allowed label; {hint}")
        for candidate in (text, [ln for ln in text.splitlines() if ln.strip()][-1]):
            value = candidate.strip(_EDGES + "\n")
            if value.lower() in allowed:
                return Parsed(allowed[value.lower()])
        return Parsed(None, f"no label in output {_quote(text.strip())}; {hint}")

    def grade(self, task: Task, answer: str | None, *, attempt: int = 1) -> Feedback:
        """1 for the rule's label, else 0. On train and val the message names the expected label (what a reflective
        method learns the rule from); test feedback, which no method sees, does not."""
        reveal = task.split != "test"
        expected = f" The expected label is {task.reference}." if reveal else ""
        if answer is None:
            return Feedback(0.0, False, f"No allowed label could be read from the output.{expected}")
        if answer == task.reference:
            return Feedback(1.0, True, f"Correct: {task.reference}.")
        return Feedback(0.0, False, f"Wrong label {answer}.{expected}")

    def system_prompt(self) -> str:
        return ("Classify each support ticket into exactly one of the labels listed with it. "
                "Reply with the label only.\n")

    def solver_params(self) -> GenParams:
        return GenParams(temperature=0.0, max_tokens=16)

    def format_task(self, task: TaskView) -> str:
        return f"{task.prompt}\nLabel:"

    def info(self) -> dict[str, Any]:
        """The labels and a digest of the hidden rule (the rule itself is `make_rule(seed, labels)`, kept out of
        reports a method might read)."""
        digest = hashlib.sha256(self.rule.text().encode("utf-8")).hexdigest()[:12]
        return {**super().info(), "labels": list(self.rule.labels), "rule_digest": digest,
                "params": dict(sorted(to_plain(self.params).items()))}
