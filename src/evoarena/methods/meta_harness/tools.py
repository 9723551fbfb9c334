"""The proposer's tools over the search history (Meta-Harness's proposer reads prior candidates' files, scores and
traces with Read/Glob/Grep and chooses what to read): `ls`, `read`, `grep` on a read-only view — a mapping of
relative paths to texts that holds only what the access mode exposes, never test data — and the two ways to call
them: the plain-text protocol a model without function calling uses (a line `TOOL: <name> <argument>` asks,
`FINAL:` ends) and function calling (`FUNCTIONS`, their JSON-schema definitions; `run_function`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evoarena.methods.jsonparse import leading_object
from evoarena.models import Tool
from evoarena.models import ToolCall as FunctionCall

MAX_OUTPUT = 4000  # characters of one tool result shown to the proposer
_CALL = re.compile(r"^\s*TOOL:\s*(ls|read|grep)\b[ \t]*(.*?)\s*$", re.M)


def _string(what: str) -> dict[str, Any]:
    return {"type": "string", "description": what, "maxLength": 200}


def _schema(required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_DIRECTORY = "a directory of the history (e.g. candidates/c0); empty for all of it"
FUNCTIONS = (
    Tool("ls", "List the files of the search history under a directory, with their sizes.",
         _schema([], directory=_string(_DIRECTORY))),
    Tool("read", "Read one file of the search history.",
         _schema(["path"], path=_string("the file's path, as ls lists it (e.g. summary.jsonl)"))),
    Tool("grep", "Lines of the search history's files that match a regular expression (case-insensitive), as "
                 "path:line: text.",
         _schema(["pattern"], pattern=_string("a regular expression"), directory=_string(_DIRECTORY))),
)


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
    return _clipped(out)


def run_function(view: Mapping[str, str], call: FunctionCall) -> tuple[str, str | None]:
    """A function call's output on `view` (clipped as `run_tool`'s), and why it is malformed (None when it is not:
    its name is one of `FUNCTIONS` and its arguments a JSON object of the fields that tool takes, as strings). A
    malformed call's output tells the model what was wrong."""
    try:
        args = call.parsed()
    except ValueError as err:
        why = f"{call.name}: arguments are not a JSON object ({err})"
        return f"(error: {why})", why
    known = {t.name: t for t in FUNCTIONS}
    if call.name not in known:
        why = f"no tool named {call.name!r} (tools: {', '.join(known)})"
        return f"(error: {why})", why
    schema = known[call.name].parameters
    fields = set(schema["properties"])
    missing = [k for k in schema["required"] if k not in args]
    wrong = [k for k, v in args.items() if k not in fields or not isinstance(v, str)]
    if missing or wrong:
        why = f"{call.name}: expected string fields {sorted(fields)} (required: {schema['required']}), got {args}"
        return f"(error: {why})", why
    if call.name == "ls":
        out = ls(view, args.get("directory", ""))
    elif call.name == "read":
        out = read(view, args["path"], "the ls tool")
    else:
        out = grep_in(view, args["pattern"], args.get("directory", ""))
    return _clipped(out), None


def _clipped(out: str) -> str:
    return out if len(out) <= MAX_OUTPUT else out[:MAX_OUTPUT] + f"\n[... clipped at {MAX_OUTPUT} characters]"


def ls(view: Mapping[str, str], prefix: str = "") -> str:
    """The paths under `prefix` (a directory, or "" for all), one per line with its size."""
    base = prefix.strip().strip("/")
    paths = [p for p in sorted(view) if not base or p == base or p.startswith(base + "/")]
    if not paths:
        return f"(nothing under {prefix!r})"
    return "\n".join(f"{p}  ({len(view[p])} chars)" for p in paths)


def read(view: Mapping[str, str], path: str, lister: str = "`TOOL: ls`") -> str:
    key = path.strip().strip("/")
    if key not in view:
        return f"(no file {key!r} in the history you can see; {lister} lists what there is)"
    return view[key]


def grep(view: Mapping[str, str], argument: str) -> str:
    """`grep PATTERN [PREFIX]`: lines matching the regular expression (case-insensitive), as path:line: text."""
    pattern, _, prefix = argument.strip().partition(" ")
    return grep_in(view, pattern, prefix)


def grep_in(view: Mapping[str, str], pattern: str, prefix: str = "") -> str:
    """Lines of the files under `prefix` matching the regular expression `pattern` (case-insensitive)."""
    try:
        rx = re.compile(pattern, re.I)
    except re.error as err:
        return f"(bad pattern {pattern!r}: {err})"
    base = prefix.strip().strip("/")
    hits = [f"{p}:{n}: {line}" for p in sorted(view) if not base or p.startswith(base)
            for n, line in enumerate(view[p].splitlines(), 1) if rx.search(line)]
    return "\n".join(hits[:200]) if hits else f"(no line matches {pattern!r})"


def final_candidates(text: str) -> list[str]:
    """JSON spans after `FINAL:`: a ```json block, the rest of the reply, or its first complete JSON object."""
    tail = text.split("FINAL:", 1)[1] if "FINAL:" in text else text
    blocks = [b.split("```", 1)[0] for b in tail.split("```json")[1:]]
    first = leading_object(tail)
    return [*blocks, tail.strip(), *([first] if first else [])]
