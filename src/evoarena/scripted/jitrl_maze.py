"""`jitrl-maze`: JitRL's roles on the maze, scripted with a fixed **bad prior** (evidence: mechanism). Its prior ranks
the moves as the maze explorer would — towards the exit when it is in sight, never straight back unless it must —
but prefers north, then west, then south, then east, away from the exit in the south-east; the ranks weigh 60, 25,
10 and 5. Following it (the static arm: the plain step prompt gets its most likely open move) goes round the same
dead ends of a maze for ever. It answers JitRL's calls from that prior alone: a proposal lists the open moves most likely first; the
numbered-options prompt gets the most likely option's number with the option-index token logprobs (the prior
renormalised over the options); the confidence prompt gets one `N: C` line per option. As the evaluator it scores a
step 10 when the exit comes into sight or is reached after it, −1 when it walks straight back, 0 otherwise. Only
the step memory can make it leave the prior."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from evoarena.api import policy
from evoarena.models import GenParams, Message, PolicyReply, TokenLogprob

ORDER = ("north", "west", "south", "east")  # the prior's preference: away from the exit in the south-east
RANK_WEIGHTS = (60, 25, 10, 5)  # the weight of the prior's first, second, … choice
BACK = {"north": "south", "south": "north", "east": "west", "west": "east"}
_OPTION = re.compile(r"^(\d+)\. (\w+)\s*$", re.MULTILINE)
_STEP = re.compile(r"^Step (\d+):\nState: (.*?)\nAction: (\w+)", re.MULTILINE | re.DOTALL)


def preference(text: str) -> list[str]:
    """The prior's ranking of the four moves for the step in `text`: towards the exit when it is in sight, then the
    moves that do not walk straight back in `ORDER`, the move back last (the maze explorer's habits)."""
    now = text.rsplit("Now:", 1)[-1]
    seen = re.search(r"You see the goal to the (\w+)", now)
    moves = re.findall(r"^> (\w+)", text, re.MULTILINE)
    back = BACK.get(moves[-1]) if moves else None
    ranked = sorted(ORDER, key=lambda m: (m != (seen.group(1) if seen else None), m == back, ORDER.index(m)))
    return ranked


def weights(options: Sequence[str], text: str) -> list[float]:
    """The prior's weights of `options` (by their rank in `preference`), renormalised."""
    ranked = preference(text)
    raw = [float(RANK_WEIGHTS[ranked.index(o)]) if o in ranked else 1.0 for o in options]
    return [w / sum(raw) for w in raw]


def open_moves(text: str) -> list[str]:
    """The open moves of the step's current cell (all four when the prompt does not say)."""
    now = text.rsplit("Now:", 1)[-1]
    found = re.search(r"Open directions: ([a-z, ]+)\.", now)
    return [d.strip() for d in found.group(1).split(",")] if found else list(ORDER)


def rank(options: Sequence[str], text: str) -> PolicyReply:
    """The most likely option's number, with every option's index-token logprob as the alternatives."""
    probs = weights(options, text)
    order = sorted(range(len(options)), key=lambda i: -probs[i])
    top = tuple((str(i + 1), math.log(probs[i])) for i in order)
    return PolicyReply(top[0][0], logprobs=(TokenLogprob(top[0][0], top[0][1], top),))


def confidence(options: Sequence[str], text: str) -> str:
    probs = weights(options, text)
    return "\n".join(f"{i + 1}: {round(100 * p)}" for i, p in enumerate(probs))


def evaluate(prompt: str) -> str:
    """One `N: S` line per step: 10 when the exit is in sight or reached after the step, −1 for a step straight
    back, 0 otherwise."""
    steps = _STEP.findall(prompt)
    final = prompt.rsplit("State:", 1)[-1]
    lines = []
    for i, (n, _state, action) in enumerate(steps):
        after = steps[i + 1][1] if i + 1 < len(steps) else final
        back = i > 0 and BACK.get(steps[i - 1][2]) == action
        score = 10 if "You see the goal" in after or "You reached the goal" in after else -1 if back else 0
        lines.append(f"{n}: {score}")
    return "\n".join(lines)


@policy("jitrl-maze")
def jitrl_maze(messages: Sequence[Message], params: GenParams) -> str | PolicyReply:
    text = messages[-1].content
    if "You are scoring game actions" in text:
        return evaluate(text)
    options = [m.group(2) for m in _OPTION.finditer(text.split("Options for the next action:", 1)[-1])] \
        if "Options for the next action:" in text else []
    if "Reply with its number only" in text:
        return rank(options, text)
    if "give your confidence from 0 to 100" in text:
        return confidence(options, text)
    ranked = preference(text)
    moves = sorted(open_moves(text), key=ranked.index)
    if "Instead of one action, propose" in text:
        k = int(re.search(r"propose (\d+) different", text).group(1))  # type: ignore[union-attr]
        return "\n".join(f"{i + 1}. {m}" for i, m in enumerate(moves[:k]))
    return moves[0]
