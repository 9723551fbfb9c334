"""`arith-mixed-groups`: arith-student whose unlessoned answers are right only on some samples, so a Training-Free
GRPO group is mixed whatever order its samples ran in, and which plays TF-GRPO's summarizer, critic and updater
(evidence: mechanism; the parallel-proposal tests and perf/parallel_proposals.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from evoarena.api import policy
from evoarena.benchmarks.arith.generator import family_of
from evoarena.models import GenParams, Message
from evoarena.scripted.arith import RULES, arith_student, naive_answer, solve_correctly


@policy("arith-mixed-groups")
def mixed_groups(messages: Sequence[Message], params: GenParams) -> str:
    """Right, without a lesson, on the samples whose seed is a multiple of 3 (the first sample's seed is 0); a
    one-line summary; the family's rule as the critic's one `add`; the proposed operation as the update."""
    text = "\n\n".join(m.content for m in messages)
    if text.rstrip().endswith("Summary:"):
        return "It answered."
    q = re.search(r"^Question: (.+)$", text, flags=re.M)
    if text.rstrip().endswith("Critique (JSON):") and q:
        return json.dumps([{"option": "add", "experience": RULES[family_of(q.group(1).removeprefix("Q: "))]}])
    if text.rstrip().endswith("Updated operations (JSON):"):
        return "[" + text.split("Proposed operation:\n", 1)[1].split("\n", 1)[0] + "]"
    questions = re.findall(r"^Q: (.+)$", text, flags=re.M)
    if not questions or "[G" in text:
        return arith_student(messages, params)
    right = (params.seed or 0) % 3 == 0
    return f" {solve_correctly(questions[-1]) if right else naive_answer(questions[-1])}"
