"""`evotest-maze`: EvoTest's roles on the maze, scripted (evidence: mechanism). As the solver it is the maze explorer
(benchmarks/maze/scripted.py: it follows a `Prefer: …` note). As the evolver it reads the parent's guiding prompt, the
whole trajectory and the failure patterns it is shown, and writes a new guiding prompt whose `Prefer:` order puts
last the directions that bumped into walls or fill the failure loops' tails (rotated by one when that changes
nothing, so every evolution changes the explorer's episodes), a state extractor that counts moves and bumps, and —
when the prompt asks for them (scope `paper`) — a memory of the loops to avoid and temperature 0."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from evoarena.api import policy
from evoarena.benchmarks.maze.scripted import maze_explorer
from evoarena.models.base import GenParams, Message

HISTORY_START, HISTORY_END = "--- GAME HISTORY START ---", "--- GAME HISTORY END ---"
ORDER = ("east", "south", "north", "west")  # the explorer's own order without a note
EXTRACTOR = ("def extract_state(game_history):\n"
             "    moves = game_history.count(\"ACTION TAKEN:\")\n"
             "    bumps = game_history.count(\"You bump into a wall\")\n"
             "    return f\"{moves} moves so far, {bumps} into walls.\"\n")
_PREFER = re.compile(r"Prefer:\s*([a-z ,]+)", re.IGNORECASE)
_AVOID = re.compile(r"Actions to avoid \(tail\): (.*)")


def parent_order(prompt: str) -> list[str]:
    """The `Prefer:` order of the guiding prompt the evolver is shown (the explorer's own order without one)."""
    guide = prompt.split("rewrite it completely if needed):", 1)[-1].split(HISTORY_START, 1)[0]
    found = _PREFER.search(guide)
    named = [d.strip() for d in found.group(1).split(",")] if found else []
    named = [d for d in named if d in ORDER]
    return list(dict.fromkeys(named + list(ORDER)))


def blamed(prompt: str) -> Counter[str]:
    """How often each direction bumped a wall in the trajectory or appears in a failure loop's tail."""
    history = prompt.split(HISTORY_START, 1)[-1].split(HISTORY_END, 1)[0]
    counts: Counter[str] = Counter(re.findall(r"^> (\w+)\nYou bump into a wall", history, re.MULTILINE))
    for tail in _AVOID.findall(prompt):
        counts.update(a.strip() for a in tail.split(",") if a.strip() in ORDER)
    return counts


def evolve(prompt: str) -> str:
    order = parent_order(prompt)
    counts = blamed(prompt)
    new = sorted(order, key=lambda d: counts[d])  # stable: the parent's order among equals
    if new == order:
        new = order[1:] + order[:1]
    reply = f"Explore the maze one cell at a time and do not walk in circles. Prefer: {', '.join(new)}\n"
    if "<memory>" in prompt:
        worst = [d for d, _ in counts.most_common(2)] or ["none"]
        reply += f"<memory>\nLoops went mostly {', '.join(worst)}; try other turns at junctions.\n</memory>\n"
        reply += "<temperature>0</temperature>\n"
    return reply + f"<code>\n{EXTRACTOR}</code>\n"


@policy("evotest-maze")
def evotest_maze(messages: Sequence[Message], params: GenParams) -> str:
    prompt = messages[-1].content
    if HISTORY_START in prompt:
        return evolve(prompt)
    return maze_explorer(messages, params)
