"""CLR task texts: what the solver sees at layer k (practice and test share the records and rules)."""

from __future__ import annotations

import random

from evoarena.benchmarks.clr.chains import Slot
from evoarena.benchmarks.clr.domains import Domain
from evoarena.benchmarks.prompts import prompt_template

PRACTICE_QUESTION = "Your program is checked on the public example and on hidden variants of it by the largest total."
TEST_QUESTION = "Your program is checked once, on hidden inputs, by the sum of the totals."


def described_values(slots: list[Slot], seed: str) -> list[tuple[str, str]]:
    """Every value that may appear in this layer's inputs, members and non-members alike, in a seeded order
    (so position gives nothing away)."""
    items = {v: d for s in slots for v, d in s.descriptions.items()}
    out = sorted(items.items())
    random.Random(seed).shuffle(out)
    return out


def task_text(domain: Domain, slots: list[Slot], *, practice: bool, seed: str, class_names: str | None = None) -> str:
    plural = f"{domain.record}s"
    view = [{"label": s.label, "field": s.field, "example": s.example, "record_plural": plural} for s in slots]
    return prompt_template("evoarena.benchmarks.clr", "task.md").render(
        domain=domain,
        slots=view,
        descriptions=described_values(slots, seed),
        question=PRACTICE_QUESTION if practice else TEST_QUESTION,
        class_names=class_names,
    )
