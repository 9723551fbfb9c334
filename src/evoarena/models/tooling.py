"""Function calling's records: a tool a model may call (`Tool`) and a call it made (`ToolCall`), with their JSON
forms (what a cache entry, a ledger row and the method channel carry)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Tool:
    """A function a model may call: its name, what it does, and its parameters as a JSON schema (an object)."""

    name: str
    description: str
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}},
                                          hash=False)

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError("a tool needs a name")
        if not isinstance(self.description, str) or not isinstance(self.parameters, Mapping):
            raise TypeError(f"tool {self.name!r}: a description (string) and parameters (a JSON schema object)")
        json.dumps(dict(self.parameters))  # plain JSON values only: the schema joins the cache key


@dataclass(frozen=True)
class ToolCall:
    """A call a model made: the id the server gave it (its result answers that id), the tool's name and the
    arguments as the model wrote them — meant to be a JSON object, but not checked here: a caller that parses
    them rejects what is not."""

    id: str
    name: str
    arguments: str

    def parsed(self) -> dict[str, Any]:
        """The arguments as a JSON object; ValueError when they are not one."""
        value = json.loads(self.arguments)
        if not isinstance(value, dict):
            raise ValueError(f"the arguments are a JSON {type(value).__name__}, not an object")
        return value


def tools_from_json(values: Any) -> tuple[Tool, ...]:
    """Tools from their plain forms (`evoarena.codec.to_plain`), checked (they may come from a method's process)."""
    if not isinstance(values, list | tuple):
        raise TypeError("tools: expected a list")
    out = []
    for v in values:
        if not isinstance(v, Mapping) or not isinstance(v.get("name"), str):
            raise TypeError("a tool is {name, description, parameters}")
        out.append(Tool(v["name"], str(v.get("description", "")), v.get("parameters") or {"type": "object"}))
    return tuple(out)


def tool_calls_from_json(values: Any) -> tuple[ToolCall, ...]:
    """Tool calls from their plain forms (`evoarena.codec.to_plain`), checked."""
    if not isinstance(values, list | tuple):
        raise TypeError("tool_calls: expected a list")
    out = []
    for v in values:
        if not isinstance(v, Mapping) or not all(isinstance(v.get(k), str) for k in ("id", "name", "arguments")):
            raise TypeError("a tool call is {id, name, arguments}, all strings")
        out.append(ToolCall(v["id"], v["name"], v["arguments"]))
    return tuple(out)
