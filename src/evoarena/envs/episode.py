"""One episode: an actor acts in an environment under **one step budget shared by environment actions and harness
meta-actions** (BPE's `track[…]`, `commit[…]`, `recall[…]`, `note[…]`: harness calls are not free), and every step
is kept — observation, admissible actions, the action, its kind, the score and the harness calls it made."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from evoarena.envs.base import Env

META = re.compile(r"^\s*([a-z_]+)\[(.*)\]\s*$", re.S)
MetaHandler = Callable[[str], str]  # the meta-action's argument -> what the actor is shown


@dataclass(frozen=True)
class StepRecord:
    """One step of the budget: an environment action or a meta-action."""

    index: int
    kind: str  # "env" | "meta"
    action: str
    observation: str  # what came back: the environment's observation, or the meta-action's answer
    score: float  # the episode's cumulative score after the step
    done: bool
    admissible: tuple[str, ...] | None  # the environment's admissible actions before the step
    calls: Mapping[str, int] = field(default_factory=dict)  # harness calls the actor made for it, by type
    info: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Episode:
    """A finished episode: its steps, final score, whether it was won and why it stopped."""

    env: str
    seed: int
    steps: tuple[StepRecord, ...]
    final_score: float
    max_score: float
    won: bool
    stopped: str  # "done" | "budget"

    @property
    def score_curve(self) -> list[float]:
        return [s.score for s in self.steps]

    def steps_by_kind(self) -> dict[str, int]:
        return dict(Counter(s.kind for s in self.steps))

    def calls_by_type(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for s in self.steps:
            total.update(s.calls)
        return dict(total)


@dataclass(frozen=True)
class Decision:
    """The actor's choice for one step and the harness calls it made to reach it (e.g. {"actor": 1})."""

    action: str
    calls: Mapping[str, int] = field(default_factory=dict)


class Actor(Protocol):
    """Chooses the next step from the episode so far (the latest record holds the last observation)."""

    def decide(self, observation: str, history: Sequence[StepRecord], admissible: Sequence[str] | None) -> Decision:
        ...


def run_episode(env: Env, actor: Actor, *, seed: int, max_steps: int,
                meta: Mapping[str, MetaHandler] | None = None) -> Episode:
    """Reset `env` to `seed` and let `actor` act until the environment is done or `max_steps` steps — environment
    actions and meta-actions alike — are spent. A reply `name[argument]` naming a handler in `meta` is a
    meta-action: its handler's answer is the next observation and the environment does not move."""
    if max_steps < 1:
        raise ValueError(f"run_episode: max_steps must be >= 1, got {max_steps}")
    handlers = dict(meta or {})
    observation, score, done = env.reset(seed), 0.0, False
    steps: list[StepRecord] = []
    while not done and len(steps) < max_steps:
        admissible = env.admissible_actions()
        decision = actor.decide(observation, steps, admissible)
        allowed = tuple(admissible) if admissible is not None else None
        match = META.match(decision.action)
        if match and match.group(1) in handlers:
            observation = handlers[match.group(1)](match.group(2).strip())
            steps.append(StepRecord(len(steps), "meta", decision.action, observation, score, False, allowed,
                                    dict(decision.calls), {"meta": match.group(1)}))
            continue
        result = env.step(decision.action)
        observation, score, done = result.observation, result.score, result.done
        steps.append(StepRecord(len(steps), "env", decision.action, observation, score, done, allowed,
                                dict(decision.calls), dict(result.info)))
    return Episode(env.name, seed, tuple(steps), score, env.max_score, env.won, "done" if done else "budget")
