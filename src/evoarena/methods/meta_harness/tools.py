"""The proposer's tools over the search history (Meta-Harness's proposer reads prior candidates' files, scores and
traces with Read/Glob/Grep and chooses what to read): `ls`, `read`, `grep` on a read-only view — a mapping of
relative paths to texts that holds only what the access mode exposes, never test data — and the plain-text protocol
a model without function calling uses to call them: a line `TOOL: <name> <argument>` asks, `FINAL:` ends."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

MAX_OUTPUT = 4000  # characters of one tool result shown to the proposer
_CALL = re.compile(r"^\s*TOOL:\s*(ls|read|grep)\b[ \t]*(.*?)\s*$", re.M)


@dataclass(frozen=True)
class ToolCall:
    name: str
    argument: str


def parse_call(reply: str) -> ToolCall | None:
    """The first tool call in a reply that has no `FINAL:` before it; None when the reply is final or calls none."""
    final = reply.find("FINAL:")
    match = _CALL.search(reply)
    if match is None or (final >= 0 and final < match.start()):
        return None
    return ToolCall(match.group(1), match.group(2))


def run_tool(view: Mapping[str, str], call: ToolCall) -> str:
    """The tool's output on `view` (clipped to MAX_OUTPUT characters)."""
    if call.name == "ls":
        out = ls(view, call.argument)
    elif call.name == "read":
        out = read(view, call.argument)
    else:
        out = grep(view, call.argument)
    return out if len(out) <= MAX_OUTPUT else out[:MAX_OUTPUT] + f"\n[... clipped at {MAX_OUTPUT} characters]"


def ls(view: Mapping[str, str], prefix: str = "") -> str:
    """The paths under `prefix` (a directory, or "" for all), one per line with its size."""
    base = prefix.strip().strip("/")
    paths = [p for p in sorted(view) if not base or p == base or p.startswith(base + "/")]
    if not paths:
        return f"(nothing under {prefix!r})"
    return "\n".join(f"{p}  ({len(view[p])} chars)" for p in paths)


def read(view: Mapping[str, str], path: str) -> str:
    key = path.strip().strip("/")
    if key not in view:
        return f"(no file {key!r} in the history you can see; `TOOL: ls` lists what there is)"
    return view[key]


def grep(view: Mapping[str, str], argument: str) -> str:
    """`grep PATTERN [PREFIX]`: lines matching the regular expression (case-insensitive), as path:line: text."""
    pattern, _, prefix = argument.strip().partition(" ")
    try:
        rx = re.compile(pattern, re.I)
    except re.error as err:
        return f"(bad pattern {pattern!r}: {err})"
    base = prefix.strip().strip("/")
    hits = [f"{p}:{n}: {line}" for p in sorted(view) if not base or p.startswith(base)
            for n, line in enumerate(view[p].splitlines(), 1) if rx.search(line)]
    return "\n".join(hits[:200]) if hits else f"(no line matches {pattern!r})"
