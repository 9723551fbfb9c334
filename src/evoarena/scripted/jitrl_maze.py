"""`jitrl-maze`: JitRL's roles on the maze, scripted with a fixed **bad prior** (evidence: mechanism). Its prior ranks
the open moves as the maze explorer would — towards the exit when it is in sight, never straight back unless it must
— but prefers north, then west, then south, then east, away from the exit in the south-east (ranks weigh 60, 25, 10,
5: `jitrl_roles`). Following it (the static arm: the plain step prompt gets its first move) goes round the same dead
ends of a maze for ever; only the step memory can make it leave the prior. As the evaluator it scores a step 10 when
the exit comes into sight or is reached after it, −1 when it walks straight back, 0 otherwise."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evoarena.api import policy
from evoarena.models import GenParams, Message, PolicyReply
from evoarena.scripted.jitrl_roles import RANK_WEIGHTS, answer

ORDER = ("north", "west", "south", "east")  # the prior's preference: away from the exit in the south-east
BACK = {"north": "south", "south": "north", "east": "west", "west": "east"}

__all__ = ["ORDER", "RANK_WEIGHTS", "jitrl_maze", "ranking", "scoring"]


def ranking(text: str) -> list[str]:
    """The open moves of the step in `text`, best first: towards the exit when it is in sight, then those that do
    not walk straight back in `ORDER`, the move back last."""
    now = text.rsplit("Now:", 1)[-1]
    seen = re.search(r"You see the goal to the (\w+)", now)
    found = re.search(r"Open directions: ([a-z, ]+)\.", now)
    moves = re.findall(r"^> (\w+)", text, re.MULTILINE)
    back = BACK.get(moves[-1]) if moves else None
    open_moves = [d.strip() for d in found.group(1).split(",")] if found else list(ORDER)
    return sorted(open_moves, key=lambda m: (m != (seen.group(1) if seen else None), m == back,
                                             ORDER.index(m) if m in ORDER else len(ORDER)))


def scoring(steps: list[tuple[str, str, float]], final: str) -> list[int]:
    out = []
    for i, (_state, action, _reward) in enumerate(steps):
        after = steps[i + 1][0] if i + 1 < len(steps) else final
        back = i > 0 and BACK.get(steps[i - 1][1]) == action
        out.append(10 if "You see the goal" in after or "You reached the goal" in after else -1 if back else 0)
    return out


@policy("jitrl-maze")
def jitrl_maze(messages: Sequence[Message], params: GenParams) -> str | PolicyReply:
    return answer(messages, ranking, scoring)
