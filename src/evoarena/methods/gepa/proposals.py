"""One GEPA iteration's proposal tasks and their batched evaluation (gepa 0.1.4 `strategies/proposal_sampling.py`
and `ReflectiveMutationProposer.propose`): P parents drawn from the Pareto front, each mutated N times on its own
minibatch, every draw made before any work; parents, then children, evaluated in one `ctx.rollouts` request each."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from evoarena.api import Attempt, Feedback, PracticeContext, TaskView
from evoarena.methods.gepa.pool import Candidate
from evoarena.methods.scoring import rollouts_of_trees
from evoarena.search import ParetoSampler, Scored

Known = Mapping[str, tuple[Attempt, Feedback]]
"""Results already in hand for a tree, by task id (the step's submitted attempt), reused as GEPA's cache."""
Examples = list[dict[str, str]]


@dataclass
class Proposal:
    """One (parent, minibatch) task of an iteration and what became of it: the parent's minibatch scores and
    reflective examples, the component mutated, the proposed text and the child's minibatch scores."""

    parent: Candidate
    batch: list[TaskView]
    before: list[float] = field(default_factory=list)
    examples: Examples = field(default_factory=list)
    component: str = ""
    text: str = ""
    after: list[float] = field(default_factory=list)

    @property
    def child(self) -> dict[str, str]:
        return {**self.parent.components, self.component: self.text}


def sample(rng: random.Random, select: ParetoSampler, archive: Sequence[Scored], by_id: Mapping[str, Candidate],
           task: TaskView, train: Sequence[TaskView], size: int, parents: int, mutations: int) -> list[Proposal]:
    """`parents` × `mutations` proposal tasks (`PxNSampling`; 1 × 1 is `SingleMutationSampling`). The first minibatch
    is led by the step's task with `size - 1` other train tasks; every further one is `size` train tasks."""
    out: list[Proposal] = []
    others = [t for t in train if t.id != task.id]
    for _ in range(parents):
        parent = by_id[select.select(archive, rng).id]
        for _ in range(mutations):
            if not out:
                batch = [task, *rng.sample(others, min(size - 1, len(others)))]
            else:
                batch = rng.sample(list(train), min(size, len(train)))
            out.append(Proposal(parent, batch))
    return out


def evaluate_many(ctx: PracticeContext, jobs: Sequence[tuple[Mapping[str, str], Sequence[TaskView], Known | None]],
                  ) -> list[tuple[list[float], Examples]]:
    """Scores and reflective examples of several (tree, tasks, known) jobs, every rollout in one request in job
    order (the adapter's `batch_evaluate`), then graded in the same order; a provider error scores 0."""
    ran = rollouts_of_trees(ctx, [(tree, tasks, known or {}) for tree, tasks, known in jobs])
    out = []
    for (_, tasks, known), attempts in zip(jobs, ran, strict=True):
        scores: list[float] = []
        examples: Examples = []
        for task in tasks:
            if known and task.id in known:
                attempt, fb = known[task.id]
            else:
                attempt = attempts[task.id]
                if attempt.error:
                    scores.append(0.0)
                    examples.append({"inputs": task.prompt, "outputs": "", "feedback": "(no output: provider error)"})
                    continue
                fb = ctx.feedback(task, attempt)
            scores.append(float(fb.score))
            examples.append({"inputs": task.prompt, "outputs": attempt.text.strip(), "feedback": fb.message})
        out.append((scores, examples))
    return out
