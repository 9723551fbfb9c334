"""`continual-maze`: Continual Harness's roles on the maze, scripted (evidence: mechanism). As the solver it is the
maze explorer (benchmarks/maze/scripted.py: it follows the first `Prefer: …` note it is shown). As the refiner it
answers each pass in its format: the prompt pass rewrites the strategic guidance so the explorer prefers the
directions of the exit's corner named in the goal (then the others in their old order); the skills pass adds a
junction rule, then rates it by the window's stuck steps; the memory pass keeps one progress entry up to date."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from evoarena.api import policy
from evoarena.benchmarks.maze.scripted import maze_explorer
from evoarena.models.base import GenParams, Message

ORDER = ("east", "south", "north", "west")  # the explorer's own order without a note
_CORNER = re.compile(r"exit is in the (north|south)-(east|west) corner", re.I)
_PREFER = re.compile(r"Prefer:\s*([a-z ,]+)", re.I)
MARK = "REFINER PASS: "


def _section(prompt: str, title: str) -> str:
    """A `## title` section of the refiner's prompt (up to the next `## `)."""
    part = prompt.split(f"## {title}", 1)
    return part[1].split("\n## ", 1)[0] if len(part) > 1 else ""


def refine_prompt(prompt: str) -> str:
    corner = _CORNER.search(prompt)
    current = _PREFER.search(_section(prompt, "Current strategic guidance"))
    old = [d.strip() for d in current.group(1).split(",")] if current else []
    old = list(dict.fromkeys([d for d in old if d in ORDER] + list(ORDER)))
    first = [corner.group(1).lower(), corner.group(2).lower()] if corner else old[:2]
    order = first + [d for d in old if d not in first]
    return (f"<prompt>\nHead for the exit: at every junction take {order[0]} or {order[1]} first, and turn back "
            f"only at a dead end. Prefer: {', '.join(order)}\n</prompt>")


def refine_skills(prompt: str) -> str:
    stuck = prompt.count("Issue: stuck")
    library = _section(prompt, "Current skill library")
    if "[junction_rule]" not in library:
        return json.dumps({"analysis": "no skill yet", "add": [{
            "id": "junction_rule", "name": "Junction rule", "effectiveness": "medium",
            "description": "At a junction take the open direction toward the exit first; at a dead end turn back."}]})
    return json.dumps({"analysis": f"{stuck} stuck steps in the window", "update": [
        {"id": "junction_rule", "effectiveness": "low" if stuck else "high"}]})


def refine_memory(prompt: str) -> str:
    window = _section(prompt, "Recent trajectory")
    steps = re.findall(r"^### Step (\d+)", window, re.M)
    moves = re.findall(r"^Action: (\w+)", window, re.M)
    content = (f"Steps {steps[0]}-{steps[-1]}: {len(moves)} moves, last {moves[-1]}." if steps and moves
               else "No step reviewed yet.")
    current = _section(prompt, "Current memory")
    action = "update" if "[progress]" in current else "add"
    return json.dumps({"analysis": "progress noted", action: [
        {"id": "progress", "title": "Progress", "content": content, "importance": 3}]})


def refiner(prompt: str) -> str | None:
    """The refiner's reply to a pass's prompt, or None when `prompt` is not a refiner pass."""
    if not prompt.startswith(MARK):
        return None
    name = prompt[len(MARK):].split("\n", 1)[0].strip()
    return {"prompt": refine_prompt, "skills": refine_skills, "memory": refine_memory}[name](prompt)


@policy("continual-maze")
def continual_maze(messages: Sequence[Message], params: GenParams) -> str:
    reply = refiner(messages[-1].content)
    return reply if reply is not None else maze_explorer(messages, params)
