"""Reading a solver's code out of its reply and making the program that is tested: a fenced code block or the raw
reply, holding either the whole function or only its body."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from evoarena.api import Parsed

_FENCE = re.compile(r"^```[ \t]*([\w+-]*)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
_OPEN_FENCE = re.compile(r"^```[ \t]*[\w+-]*[ \t]*\n", re.M)
_ANY_DEF = re.compile(r"^(?:async\s+)?def\s+\w+\s*\(", re.M)


def defines(code: str, name: str) -> bool:
    """Whether `code` defines `name` at the top level."""
    return re.search(rf"^(?:async\s+)?def\s+{re.escape(name)}\s*\(", code, re.M) is not None


def extract(text: str) -> Parsed:
    """The code of a reply: the last fenced Python (or untagged) block that defines a function, else the first such
    block, else the reply itself (an unclosed opening fence dropped: a reply cut off mid-block). Whether the code is
    the whole function or its body is decided against the problem's entry point when it is graded."""
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    python = [body for lang, body in blocks if lang in ("", "python", "py", "python3")]
    full = [body for body in python if _ANY_DEF.search(textwrap.dedent(body))]
    if full:
        code = full[-1]
    elif python:
        code = python[0]
    else:
        opened = _OPEN_FENCE.search(text)
        code = text[opened.end():] if opened else text
    code = code.rstrip()
    if not code.strip():
        return Parsed(None, "no code in the output")
    return Parsed(code)


@dataclass(frozen=True)
class Program:
    """The source that is run (prompt helpers + the solver's code) and whether the code was a whole function."""

    source: str
    whole_function: bool


def program(prompt: str, code: str, entry_point: str) -> Program:
    """A whole function replaces the prompt's stub (the prompt's imports and helpers stay in front of it); a body is
    appended to the prompt, indented into the function when it was written flush left."""
    dedented = textwrap.dedent(code)
    if defines(dedented, entry_point):
        stub = re.search(rf"^def\s+{re.escape(entry_point)}\s*\(", prompt, re.M)
        preamble = prompt[: stub.start()] if stub else ""
        return Program(f"{preamble}{dedented.strip(chr(10))}\n", True)
    lines = code.strip("\n").splitlines()
    first = next((ln for ln in lines if ln.strip()), "")
    if not first[:1].isspace():
        lines = [("    " + ln) if ln.strip() else ln for ln in textwrap.dedent("\n".join(lines)).splitlines()]
    return Program(prompt + "\n".join(lines) + "\n", False)
