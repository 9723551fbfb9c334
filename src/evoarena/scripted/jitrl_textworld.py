"""`jitrl-textworld`: JitRL's and EvoTest's roles on TextWorld games, scripted (evidence: mechanism). Its prior ranks
the listed actions as the `textworld-explorer` does — actions not yet taken in the shown steps first, in the listed
order — after any its guide asks to try first (ranks weigh 60, 25, 10, 5: `jitrl_roles`). As the evaluator it scores
a step 10 when it raised the score, −1 when it repeats an action of the episode, 0 otherwise. As EvoTest's evolver it
writes a guide from the game history (`evotest_textworld`). A rule follower for plumbing runs, not a player."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from evoarena.api import policy
from evoarena.models import GenParams, Message, PolicyReply
from evoarena.scripted.evotest_textworld import TRY_FIRST, evolve, first_tries, is_evolve_prompt
from evoarena.scripted.jitrl_roles import answer


def ranking(text: str) -> list[str]:
    listed = re.search(r"^Actions you can take: (.+)$", text, re.MULTILINE)
    actions = [a.strip() for a in listed.group(1).split(", ")] if listed else ["look"]
    done = set(re.findall(r"^> (.+)$", text, re.MULTILINE))
    return sorted(actions, key=lambda a: a in done)


def guided(guide: str) -> Callable[[str], list[str]]:
    """`ranking` with the actions `guide` asks to try first (those listed and not yet taken) in front."""
    first = first_tries(guide)

    def rank(text: str) -> list[str]:
        ranked = ranking(text)
        done = set(re.findall(r"^> (.+)$", text, re.MULTILINE))
        return sorted(ranked, key=lambda a: a not in first or a in done)
    return rank


def scoring(steps: list[tuple[str, str, float]], final: str) -> list[int]:
    return [10 if reward > 0 else -1 if action in [a for _, a, _ in steps[:i]] else 0
            for i, (_state, action, reward) in enumerate(steps)]


@policy("jitrl-textworld")
def jitrl_textworld(messages: Sequence[Message], params: GenParams) -> str | PolicyReply:
    if messages and is_evolve_prompt(messages[-1].content):
        return evolve(messages[-1].content)
    guide = "\n".join(m.content for m in messages[:-1])
    return answer(messages, guided(guide) if TRY_FIRST in guide else ranking, scoring)
