"""EvoTest's rule-based cross-episode memory (yf-he/EvoTest @f92474c, `CrossEpisodeMemory` and `OurAgent`), read from
a finished episode: a **positive** entry (state, action, Δscore) for every step that raised the score, retrieved for
the actor by Jaccard similarity (top 3; the harness program does that per step), and at most one **negative** entry
per episode — the last steps when the score stayed flat for 10 steps, or when the observations alternated A↔B —
of which the evolver reads the last 3 as failure patterns to avoid.

The episode comes from the attempt's answer: the outcome's step-by-step `trace` (action, observation, cumulative
score per step, as the protocol records it). The state an action was taken in is the observation before it; the first
action's is the episode's first observation, which the trace does not hold ("" here, so it is never retrieved).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel

SUCCESSES = "memory/successes.jsonl"  # shown to the actor (the harness program retrieves from it)
FAILURES = "memory/evotest/failures.jsonl"  # method state: the evolver reads it, the actor never does
PLATEAU = 10  # steps without a score change that make a plateau (released)
MIN_STEPS = 12  # an episode shorter than this yields no negative entry (released)
SEGMENT = 40  # steps kept of a failing segment (released)


class Positive(BaseModel):
    """A step that raised the score: the state it was taken in, the action, the rise and the score after it (a line
    of `memory/successes.jsonl`, which the step program reads)."""

    state: str
    action: str
    delta_score: float
    score: float


class Negative(BaseModel):
    """An episode's failing last segment (a line of `memory/evotest/failures.jsonl`)."""

    reason: str  # plateau | alternation
    length: int
    states: list[str]
    actions: list[str]
    episode: int
    episode_final_score: float


@dataclass(frozen=True)
class Played:
    """A finished episode step by step: the state each action was taken in, the action, the score after it."""

    states: tuple[str, ...]
    actions: tuple[str, ...]
    scores: tuple[float, ...]


def played(answer: str | None) -> Played | None:
    """The episode of an attempt's answer, or None when it has no step-by-step trace (no episode: a harness failure
    before the first step, a provider error, a one-shot task)."""
    try:
        trace = json.loads(answer or "").get("trace") or []
        steps = [(str(t["observation"]), str(t["action"]), float(t["score"])) for t in trace]
    except (ValueError, TypeError, AttributeError, KeyError):
        return None
    if not steps:
        return None
    observations, actions, scores = zip(*steps, strict=True)
    return Played(("", *observations[:-1]), tuple(actions), tuple(scores))


def positives(ep: Played) -> list[Positive]:
    """One entry per step whose score rose (Δ against the step before; the first against 0), as released."""
    out, before = [], 0.0
    for state, action, score in zip(ep.states, ep.actions, ep.scores, strict=True):
        if score - before > 0:
            out.append(Positive(state=state, action=action, delta_score=score - before, score=score))
        before = score
    return out


def loop_segment(ep: Played) -> tuple[str, list[str], list[str]] | None:
    """(reason, states, actions) of the episode's last steps when they failed, else None: a plateau (the last 10
    scores equal), else an A↔B alternation of the observations over the last steps (up to 19) — the released
    `_detect_loop_segment`, run once at the end of the episode."""
    states, actions, scores = list(ep.states), list(ep.actions), list(ep.scores)
    if len(states) < MIN_STEPS:
        return None
    if all(scores[-i - 1] == scores[-1] for i in range(PLATEAU)):
        return "plateau", states[-SEGMENT:], actions[-SEGMENT:]
    a, b = states[-1], states[-2]
    for i in range(3, min(20, len(states))):
        if states[-i] != (b if i % 2 == 0 else a):
            return None
    return "alternation", states[-SEGMENT:], actions[-SEGMENT:]


def negative(ep: Played, episode: int) -> Negative | None:
    found = loop_segment(ep)
    if found is None:
        return None
    reason, states, actions = found
    return Negative(reason=reason, length=len(states), states=states[-50:], actions=actions[-50:], episode=episode,
                    episode_final_score=ep.scores[-1] if ep.scores else 0.0)


def failure_block(entries: Sequence[Negative], last: int = 3) -> str:
    """The last `last` negative entries as the released evolver prompt shows them ("" when there are none)."""
    parts: list[str] = []
    for entry in list(entries)[-last:] if last > 0 else []:
        parts.append(f"Reason: {entry.reason}, Length: {entry.length}")
        parts.append("Actions to avoid (tail): " + ", ".join(entry.actions[-10:]))
    return "\n".join(parts)
