"""An episode agent's values as they cross the pipe to a method's own process: a step's view (without its task,
which stays with the cell), and the agent's action (checked: both come from the method's process)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from evoarena.api import AgentAction, EpisodeView, TaskView, Turn
from evoarena.protocol.boundary.checked import as_text


class AgentWireError(ValueError):
    """What the method's process sent for an episode agent is not of the agreed form."""


def view_to_wire(view: EpisodeView) -> dict[str, Any]:
    """The view as plain JSON values, the task left out (the receiver has its own)."""
    return {"step": view.step, "observation": view.observation, "start": view.start,
            "history": [[t.action, t.observation, t.kind] for t in view.history],
            "admissible": None if view.admissible is None else list(view.admissible),
            "steps_left": view.steps_left, "score": view.score}


def view_from_wire(value: Any, task: TaskView) -> EpisodeView:
    """`view_to_wire`'s form back into a view of `task`, checked."""
    if not isinstance(value, Mapping):
        raise AgentWireError("a step view is a mapping")
    try:
        history = tuple(Turn(str(a), str(o), str(k)) for a, o, k in value["history"])
        admissible = value["admissible"]
        return EpisodeView(task, int(value["step"]), as_text(value["observation"]), as_text(value["start"]), history,
                           None if admissible is None else tuple(as_text(a) for a in admissible),
                           int(value["steps_left"]), float(value["score"]))
    except (KeyError, TypeError, ValueError) as err:
        raise AgentWireError(f"a step view that cannot be read: {err}") from None


def action_to_wire(action: AgentAction) -> dict[str, Any]:
    """The agent's action; its `info` must be JSON (it is kept in the trace store)."""
    return {"action": action.action, "calls": dict(action.calls), "info": json.loads(json.dumps(dict(action.info)))}


def action_from_wire(value: Any) -> AgentAction:
    """An action the method's process sent, checked: the action text, calls by type as counts, info a mapping."""
    if not isinstance(value, Mapping) or not isinstance(value.get("action"), str):
        raise AgentWireError("an agent's action is a mapping with the action text")
    calls, info = value.get("calls") or {}, value.get("info") or {}
    if not isinstance(calls, Mapping) or not all(
            isinstance(k, str) and isinstance(n, int) and not isinstance(n, bool) for k, n in calls.items()):
        raise AgentWireError("an agent's calls are counts by type")
    if not isinstance(info, Mapping):
        raise AgentWireError("an agent's info is a mapping")
    return AgentAction(value["action"], dict(calls), dict(info))

