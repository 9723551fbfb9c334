"""Injecting one bug into a HumanEval canonical solution for the `repair` mode: every single-node AST mutation of
the solution's code (a comparison, `+`/`-`, an integer constant, `and`/`or`, a `not`, the operands of a
non-commutative operator), each spliced into the original text so that the docstring, comments and layout stay as
they were, and put in an order seeded by (seed, problem). Which of them is a real bug (its hidden test fails) is
decided by running it in the sandbox (`repair.py`)."""

from __future__ import annotations

import ast
import copy
import random
from collections.abc import Iterator
from dataclasses import dataclass

from evoarena.benchmarks.pyparse import parse_python

_COMPARE: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
}
_ARITH: dict[type[ast.operator], type[ast.operator]] = {ast.Add: ast.Sub, ast.Sub: ast.Add}
_NON_COMMUTATIVE = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift)
_SYMBOL: dict[type[ast.AST], str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.Add: "+",
    ast.Sub: "-", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>",
    ast.And: "and", ast.Or: "or",
}
KINDS = ("compare", "arith", "constant", "boolop", "not", "swap")
"""The mutation operators, as recorded in a task's meta (`kind`)."""


@dataclass(frozen=True)
class Mutation:
    """One injected bug: its operator (`kind`), what changed (`change`, e.g. `< to <=`), the line of `function` it
    is on, and `function`, the problem's whole text (prompt + solution) with the bug in it."""

    kind: str
    change: str
    line: int
    function: str

    def meta(self) -> dict[str, object]:
        return {"kind": self.kind, "change": self.change, "line": self.line}


def _int_node(value: int) -> ast.expr:
    """An integer literal as the parser builds it: a negative one is `-` applied to a positive constant."""
    return ast.Constant(value) if value >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-value))


def _variants(node: ast.AST) -> Iterator[tuple[str, str, ast.AST]]:
    """(kind, change, the mutated node) for every single mutation of `node` itself (not of its children)."""
    if isinstance(node, ast.Compare):
        for k, cmp in enumerate(node.ops):
            if type(cmp) in _COMPARE:
                new = copy.deepcopy(node)
                new.ops[k] = _COMPARE[type(cmp)]()
                yield "compare", f"{_SYMBOL[type(cmp)]} to {_SYMBOL[_COMPARE[type(cmp)]]}", new
    elif isinstance(node, (ast.BinOp, ast.AugAssign)):
        op = type(node.op)
        if op in _ARITH:
            new_op = copy.deepcopy(node)
            new_op.op = _ARITH[op]()
            yield "arith", f"{_SYMBOL[op]} to {_SYMBOL[_ARITH[op]]}", new_op
        if isinstance(node, ast.BinOp) and isinstance(node.op, _NON_COMMUTATIVE) \
                and ast.dump(node.left) != ast.dump(node.right):
            swapped = copy.deepcopy(node)
            swapped.left, swapped.right = swapped.right, swapped.left
            yield "swap", f"operands of {_SYMBOL[op]} swapped", swapped
    elif isinstance(node, ast.BoolOp):
        other = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield "boolop", f"{_SYMBOL[type(node.op)]} to {_SYMBOL[other]}", ast.BoolOp(other(), copy.deepcopy(node.values))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not", "not dropped", copy.deepcopy(node.operand)
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        for step in (1, -1):
            yield "constant", f"{node.value} to {node.value + step}", _int_node(node.value + step)


def _replaced(tree: ast.Module, index: int, new: ast.AST) -> ast.Module:
    """A copy of `tree` with its `index`-th node (in `ast.walk` order) replaced by `new`."""
    tree = copy.deepcopy(tree)
    target = list(ast.walk(tree))[index]
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, field, copy.deepcopy(new))
                return tree
            if isinstance(value, list) and any(v is target for v in value):
                value[[i for i, v in enumerate(value) if v is target][0]] = copy.deepcopy(new)
                return tree
    raise ValueError("the node has no parent")


def _offset(lines: list[str], starts: list[int], lineno: int, col: int) -> int:
    """The character offset of (line, UTF-8 byte column) as `ast` reports positions."""
    return starts[lineno - 1] + len(lines[lineno - 1].encode("utf-8")[:col].decode("utf-8", errors="ignore"))


def mutations(prompt: str, solution: str) -> list[Mutation]:
    """Every single mutation of the solution's code (never of the prompt's signature, docstring or helpers), in
    source order. Each is the original text with only the mutated node's span rewritten (`ast.unparse` of the new
    node, parenthesised when the context needs it); one whose text does not parse back to the mutated tree is left
    out."""
    source = prompt + solution
    tree = parse_python(source)
    lines = source.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    in_fstring = {id(n) for f in ast.walk(tree) if isinstance(f, ast.JoinedStr) for n in ast.walk(f)}
    out: list[Mutation] = []
    for index, node in enumerate(ast.walk(tree)):
        if not isinstance(node, (ast.expr, ast.stmt)) or id(node) in in_fstring or node.end_lineno is None \
                or node.end_col_offset is None:
            continue
        begin = _offset(lines, starts, node.lineno, node.col_offset)
        end = _offset(lines, starts, node.end_lineno, node.end_col_offset)
        if begin < len(prompt):
            continue
        for kind, change, new in _variants(node):
            want = ast.dump(_replaced(tree, index, new))
            text = ast.unparse(new)
            for shown in (text, f"({text})"):
                function = source[:begin] + shown + source[end:]
                try:
                    if ast.dump(parse_python(function)) == want:
                        out.append(Mutation(kind, change, node.lineno, function))
                        break
                except SyntaxError:
                    continue
    return out


def seeded_order(found: list[Mutation], seed: int, task_id: str) -> list[Mutation]:
    """The mutations in the order they are tried, drawn by a generator seeded with (seed, problem): the operators
    in a shuffled order, the mutations of each operator shuffled, then taken one operator at a time in turn (so
    integer constants, the most numerous, do not crowd out the rest). The same seed injects the same bug into a
    problem every time; another seed usually a different one."""
    rng = random.Random(f"humaneval-repair:{seed}:{task_id}")
    kinds = list(KINDS)
    rng.shuffle(kinds)
    queues = []
    for kind in kinds:
        queue = [m for m in found if m.kind == kind]
        rng.shuffle(queue)
        queues.append(queue)
    return [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]
