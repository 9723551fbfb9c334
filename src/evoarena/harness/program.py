"""What makes a harness a program: `harness.py` at its root defining `build_messages(request)`. The protocol runs
it, only in the sandbox (protocol/solve/harness_program.py); here are the names, what the program may read, and the
interface check a proposer's program passes before it is ever run — compiled, never executed."""

from __future__ import annotations

import ast
from collections.abc import Mapping

PROGRAM = "harness.py"
ENTRY = "build_messages"
MAX_PROGRAM_CHARS = 100_000


def is_program(tree: Mapping[str, str]) -> bool:
    return PROGRAM in tree


def program_files(tree: Mapping[str, str]) -> dict[str, str]:
    """What the program may read: the harness's files but itself, method state under `memory/<name>/` left out."""
    return {k: v for k, v in tree.items() if k != PROGRAM and not (k.startswith("memory/") and k.count("/") > 1)}


def program_interface(source: str) -> str:
    """Why `source` is not a harness program ("" when it is): too long, not Python, or no top-level
    `def build_messages(request)` taking one argument."""
    if len(source) > MAX_PROGRAM_CHARS:
        return f"{PROGRAM}: longer than {MAX_PROGRAM_CHARS} characters"
    try:
        module = ast.parse(source, filename=PROGRAM)
    except (SyntaxError, ValueError) as err:
        return f"{PROGRAM} does not compile: {err}"
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == ENTRY:
            args = node.args
            if len(args.posonlyargs) + len(args.args) == 1 or args.vararg is not None:
                return ""
            return f"{PROGRAM}: {ENTRY} must take one argument (the request)"
    return f"{PROGRAM} defines no top-level function {ENTRY}(request)"
