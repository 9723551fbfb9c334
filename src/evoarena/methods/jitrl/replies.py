"""Reading the actor's and the evaluator's replies for JitRL, strictly: the proposed options (numbered lines), the
option-index token's logprobs at the first position that offers one (π₀ over the options), the verbalised 0–100
confidences (one `N: C` line per option) and the evaluator's per-step scores (one `N: S` line per step, −10…10).
Anything else is a `ReplyError` whose message says what was wrong; the caller records it and never adopts it."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from evoarena.models import TokenLogprob

_NUMBERED = re.compile(r"^\s*(\d+)\s*[.):]\s*(.+?)\s*$")
_BULLET = re.compile(r"^\s*(?:[-*•>]\s*)+")
_CONFIDENCE = re.compile(r"^\s*(\d+)\s*[:.)=-]\s*(-?\d+(?:\.\d+)?)\s*%?\s*$")
_SCORE = re.compile(r"^\s*(?:step\s*)?(\d+)\s*[:.)=]\s*([-+]?\d+(?:\.\d+)?)\s*$", re.IGNORECASE)


class ReplyError(ValueError):
    """A reply that does not have the asked-for form."""


def normalise(action: str) -> str:
    """An action as compared with the admissible ones: lower case, single spaces, no surrounding quotes or dots."""
    return " ".join(action.strip().strip("`'\"").rstrip(".").lower().split())


def proposed_options(text: str, k: int, admissible: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """The distinct actions of a proposal (at most k, in order) and the lines dropped (not among the admissible
    actions, when those are known; repeats; past k). A line is an action with or without a leading number, bullet
    or `>`; without admissible actions to check against, only numbered lines count when there are any (the rest is
    taken for prose). ReplyError when no line gives an action."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    numbered = [m.group(2) for line in lines if (m := _NUMBERED.match(line))]
    if admissible is None and numbered:
        found = numbered
    else:
        found = [m.group(2) if (m := _NUMBERED.match(line)) else _BULLET.sub("", line) for line in lines]
    if not found:
        raise ReplyError("no action line")
    known = {normalise(a): a for a in admissible} if admissible is not None else None
    options: list[str] = []
    dropped: list[str] = []
    for raw in found:
        action = normalise(raw)
        if known is not None:
            if action not in known:
                dropped.append(raw)
                continue
            action = known[action]
        if not action or action in options or len(options) >= k:
            dropped.append(raw)
            continue
        options.append(action)
    if not options:
        raise ReplyError(f"none of the proposed actions is admissible: {', '.join(found)[:200]}")
    return options, dropped


@dataclass(frozen=True)
class IndexLogprobs:
    """The option-index token logprobs read from one generated position: per option, the log of the summed
    probability of the tokens that spell its number (" 2" and "2" alike), floored at the position's least likely
    listed token for an option none of them spells (`below_top`); the index the model generated there, if any."""

    logprobs: dict[int, float]
    below_top: tuple[int, ...]
    position: int
    generated: int | None


def index_logprobs(logprobs: Sequence[TokenLogprob] | None, n: int) -> IndexLogprobs:
    """Read the option-index logprobs of options 1..n from a completion's per-token logprobs with their `top`
    alternatives: the first generated position whose alternatives include an option number. ReplyError when the
    backend gave no logprobs or no alternatives, or no position lists an option number."""
    if not logprobs:
        raise ReplyError("the backend returned no token logprobs")
    if any(t.top is None for t in logprobs):
        raise ReplyError("the backend returned no top logprobs (alternatives at each position)")
    wanted = {str(i): i for i in range(1, n + 1)}
    for position, token in enumerate(logprobs):
        top = token.top or ()
        mass: dict[int, list[float]] = {}
        for text, lp in top:
            if text.strip() in wanted:
                mass.setdefault(wanted[text.strip()], []).append(lp)
        if not mass:
            continue
        floor = min(lp for _, lp in top)
        out = {i: _logsumexp(mass[i]) if i in mass else floor for i in range(1, n + 1)}
        below = tuple(i for i in range(1, n + 1) if i not in mass)
        return IndexLogprobs(out, below, position, wanted.get(token.token.strip()))
    raise ReplyError("no generated position lists an option number among its top tokens")


def confidences(text: str, n: int) -> dict[int, float]:
    """The verbalised confidences of options 1..n: every non-empty line `N: C` (C in 0..100, once per option, no
    other line). ReplyError otherwise."""
    return _numbered_values(text, n, _CONFIDENCE, 0.0, 100.0, "confidence", first=1)


def step_scores(text: str, n: int) -> list[float]:
    """The evaluator's scores of steps 0..n−1: every non-empty line `N: S` with S in −10..10, once per step, no other
    line. ReplyError otherwise."""
    got = _numbered_values(text, n, _SCORE, -10.0, 10.0, "step score", first=0)
    return [got[i] for i in range(n)]


def _numbered_values(text: str, n: int, pattern: re.Pattern[str], low: float, high: float, what: str, *,
                     first: int) -> dict[int, float]:
    values: dict[int, float] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        m = pattern.match(line)
        if m is None:
            raise ReplyError(f"not a `number: {what}` line: {line.strip()[:80]!r}")
        index, value = int(m.group(1)), float(m.group(2))
        if not first <= index < first + n:
            raise ReplyError(f"{what} for an unknown number {index} (expected {first}..{first + n - 1})")
        if index in values:
            raise ReplyError(f"two {what}s for {index}")
        if not low <= value <= high:
            raise ReplyError(f"{what} {value:g} for {index} is outside {low:g}..{high:g}")
        values[index] = value
    missing = [i for i in range(first, first + n) if i not in values]
    if missing:
        raise ReplyError(f"no {what} for {', '.join(map(str, missing))}")
    return values


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))
