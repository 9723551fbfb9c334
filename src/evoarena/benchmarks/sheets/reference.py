"""Reference programs as text: a family's solution module with its parameters and the shared helpers inlined,
so one self-contained `solve(input_path, output_path)` file results (the task's label, and what the scripted
student writes)."""

from __future__ import annotations

import ast
import pprint
from functools import cache
from importlib import resources

from evoarena.benchmarks.pyparse import parse_python

DROP = "# render: drop"


@cache
def _parts(name: str) -> tuple[tuple[str, ...], str]:
    """(top-level import lines, the rest) of `solutions/<name>.py`, without its docstring and dropped lines."""
    src = resources.files("evoarena.benchmarks.sheets.solutions").joinpath(f"{name}.py").read_text("utf-8")
    tree = parse_python(src)
    lines = src.splitlines()
    if ast.get_docstring(tree) is not None:
        lines = lines[tree.body[0].end_lineno or 0 :]
    imports: list[str] = []
    rest: list[str] = []
    for line in lines:
        if line.rstrip().endswith(DROP):
            continue
        (imports if line.startswith(("import ", "from ")) else rest).append(line)
    return tuple(imports), "\n".join(rest).strip()


@cache
def _helpers() -> dict[str, str]:
    """The shared helper functions by name, as source."""
    _, common = _parts("_common")
    tree = parse_python(common)
    lines = common.splitlines()
    return {
        node.name: "\n".join(lines[node.lineno - 1 : node.end_lineno])
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }


def _used(body: str) -> list[str]:
    """The helpers `body` calls, directly or through other helpers, in their file order."""
    helpers = _helpers()
    wanted: set[str] = set()
    todo = [body]
    while todo:
        names = {n.id for n in ast.walk(parse_python(todo.pop())) if isinstance(n, ast.Name)}
        for name in sorted(names & set(helpers) - wanted):
            wanted.add(name)
            todo.append(helpers[name])
    return [name for name in helpers if name in wanted]


def render_program(family: str, params: dict[str, str], target: str) -> str:
    """The reference program of `family` for one task's stated parameters and target range."""
    common_imports, _ = _parts("_common")
    imports, body = _parts(family)
    used = _used(body)
    common_used = [line for line in common_imports if any(f"{line.split()[1]}." in _helpers()[u] for u in used)]
    head = "\n".join(dict.fromkeys([*common_used, *imports]))
    helpers = "\n\n\n".join(_helpers()[u] for u in used)
    return (
        f"{head}\n\nPARAMS = {pprint.pformat(dict(sorted(params.items())), width=110)}\nTARGET = {target!r}\n\n\n"
        f"{helpers}\n\n\n{body}\n"
    )
