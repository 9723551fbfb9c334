"""Stuck steps and the skill auto-revert rule. As released (`_compute_skill_stats`, `_auto_revert_degraded_skills`), a
step is stuck when it moved nothing — the player's coordinates before and after the action are equal — and a skill
is reverted when its stuck percentage rose by more than 15 points between two refinements, both measured over at
least 3 steps. Our environments report no coordinates, so "moved nothing" is read from what the agent sees: no score
gain and an action that was not among those offered (where the environment lists none: an observation equal to the
one before) — `no_effect`; `repeat` also counts a step whose (observation, action) pair was already played in the
episode."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RULES = ("no_effect", "repeat")


@dataclass(frozen=True)
class StepRec:
    """One environment step as the agent saw it: the observation before, the action, what came back (None for the
    episode's last step, whose observation the agent is not shown), the score gained, the actions offered before it
    (None when the environment does not list them) and the solver's reply."""

    index: int
    action: str
    before: str | None
    after: str | None
    gain: float
    admissible: tuple[str, ...] | None = None
    reply: str = ""


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def no_effect(rec: StepRec) -> bool:
    """The step changed nothing: no score gain, and the action was not among those offered — or, where the
    environment offers no list, the observation came back unchanged. (With a list, an offered action counts as a
    move: two maze cells of a corridor read alike, so an unchanged text does not mean an unchanged position.)"""
    if rec.gain > 0:
        return False
    if rec.admissible is not None:
        return _norm(rec.action) not in {_norm(a) for a in rec.admissible}
    return rec.before is not None and rec.after is not None and _norm(rec.before) == _norm(rec.after)


def stuck_flags(records: Sequence[StepRec], rule: str = "no_effect") -> list[bool]:
    """Per step, whether it was stuck under `rule` (`repeat` looks for the pair in every earlier record given)."""
    if rule not in RULES:
        raise ValueError(f"stuck rule {rule!r} is not one of {', '.join(RULES)}")
    flags: list[bool] = []
    seen: set[tuple[str, str]] = set()
    for rec in records:
        pair = (_norm(rec.before or ""), _norm(rec.action))
        repeated = rule == "repeat" and rec.gain <= 0 and rec.before is not None and pair in seen
        flags.append(no_effect(rec) or repeated)
        seen.add(pair)
    return flags


def window_stats(flags: Sequence[bool]) -> dict[str, int]:
    """{steps, stuck, pct}: the released integer percentage 100 * stuck // steps (0 for an empty window)."""
    steps, stuck = len(flags), sum(flags)
    return {"steps": steps, "stuck": stuck, "pct": 100 * stuck // steps if steps else 0}


def revert_due(before: Mapping[str, Any], after: Mapping[str, Any], *, threshold: int = 15,
               min_steps: int = 3) -> bool:
    """The released rule: both windows have at least `min_steps` steps and the stuck percentage rose by more than
    `threshold` points."""
    if int(before["steps"]) < min_steps or int(after["steps"]) < min_steps:
        return False
    return int(after["pct"]) - int(before["pct"]) > threshold


def verdict(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """The released feedback line's judgement: worse above +10 points, improved below -10, else no change."""
    delta = int(after["pct"]) - int(before["pct"])
    return "GOT WORSE" if delta > 10 else "IMPROVED" if delta < -10 else "no significant change"
