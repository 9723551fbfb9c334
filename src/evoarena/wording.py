"""The wording of user-facing errors, shared so every one reads alike: a name that is not known
(`unknown model 'ech' — did you mean 'echo'? (known: echo, qwen)`) and a pydantic validation error in plain words
(`must be at least 0 (got -1)`), never a Python list or pydantic's own phrasing."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError


def did_you_mean(name: str, known: Iterable[str], n: int = 1) -> str:
    """` — did you mean 'X'?` for the known name closest to `name` (`'X' or 'Y'` for the `n` closest), or '' when
    none is close."""
    close = difflib.get_close_matches(name, [str(k) for k in known], n=n, cutoff=0.6)
    if not close:
        return ""
    return f" — did you mean {' or '.join(repr(c) for c in close)}?"


def listing(names: Iterable[Any]) -> str:
    """Names as a reader writes them: `a, b, c` (`none` when there are none)."""
    return ", ".join(str(n) for n in names) or "none"


def unknown(kind: str, name: str, known: Iterable[str], also: str = "", close_to: Iterable[str] | None = None,
            n: int = 1) -> str:
    """`unknown KIND 'name' — did you mean 'X'? (known: a, b; ALSO)`: one sentence, the closest name first (looked
    for among `close_to` when given, else among `known`)."""
    names = list(known)
    more = f"; {also}" if also else ""
    hint = did_you_mean(name, names if close_to is None else close_to, n)
    return f"unknown {kind} {name!r}{hint} (known: {listing(names)}{more})"


_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


def _got(value: Any) -> str:
    shown = repr(value) if isinstance(value, str | int | float | bool) or value is None else type(value).__name__
    return f" (got {shown if len(shown) <= 60 else shown[:59] + '…'})"


def plain(error: Any) -> str:
    """One pydantic error (an item of `ValidationError.errors()`) as a phrase without its location: `must be an
    integer (got 'zero')`, `missing (it is required)`, `'z' is not one of x, y — did you mean 'y'?`."""
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input")
    bounds = {"greater_than_equal": ("at least", "ge"), "greater_than": ("greater than", "gt"),
              "less_than_equal": ("at most", "le"), "less_than": ("less than", "lt")}
    types = {"int_type": "an integer", "int_parsing": "an integer", "int_from_float": "a whole number",
             "float_type": "a number", "float_parsing": "a number", "finite_number": "a finite number",
             "string_type": "text", "bool_type": "true or false", "bool_parsing": "true or false",
             "list_type": "a list", "tuple_type": "a list", "dict_type": "a mapping", "model_type": "a mapping",
             "model_attributes_type": "a mapping", "set_type": "a list"}
    if kind in bounds:
        word, key = bounds[kind]
        bound = ctx.get(key)
        shown = int(bound) if isinstance(bound, float) and bound.is_integer() else bound
        return f"must be {word} {shown}{_got(value)}"
    if kind in types:
        return f"must be {types[kind]}{_got(value)}"
    if kind == "missing":
        return "missing (it is required)"
    if kind == "extra_forbidden":
        return "is not a known field"
    if kind == "literal_error":
        options = _QUOTED.findall(str(ctx.get("expected", ""))) or [str(ctx.get("expected", ""))]
        return f"{value!r} is not one of {listing(options)}{did_you_mean(str(value), options)}"
    if kind in ("string_too_short", "too_short"):
        n = ctx.get("min_length", 1)
        if kind == "string_too_short":
            return "must not be empty" if n == 1 else f"must have at least {n} characters"
        return f"needs at least {n} item{'s' if n != 1 else ''}"
    if kind in ("string_too_long", "too_long"):
        return f"must have at most {ctx.get('max_length')} {'characters' if kind == 'string_too_long' else 'items'}"
    if kind in ("value_error", "assertion_error"):
        return str(error["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    msg = " ".join(str(error["msg"]).split())
    return f"{msg[:1].lower()}{msg[1:]}"


def first_error(err: ValidationError, model: type[BaseModel] | None = None) -> tuple[list[str], str]:
    """The first problem of `err`: its location (the path of field names and list indexes, without a union's member
    tags) and its plain phrase; the members of a union that all failed on one field read as one phrase (`must be an
    integer or null`). With the `model` validated, an unknown field names the closest of the fields at its place."""
    errors = err.errors()
    first = errors[0]
    loc = [str(p) for p in first["loc"] if isinstance(p, int) or not _is_tag(p)]
    if first["type"] == "extra_forbidden" and loc and model is not None:
        fields = fields_at(model, loc[:-1])
        known = f" (known: {listing(fields)})" if fields else ""
        return loc, f"unknown field{did_you_mean(loc[-1], fields or [])}{known}"
    phrases = [plain(e) for e in errors if e["loc"][:1] == first["loc"][:1]]
    if len(phrases) > 1 and all(p.startswith("must be ") for p in phrases):
        got = phrases[0][phrases[0].rfind(" (got "):] if " (got " in phrases[0] else ""
        kinds = list(dict.fromkeys(p.removeprefix("must be ").removesuffix(got) for p in phrases))
        if "an integer" in kinds and "a number" in kinds:
            kinds.remove("an integer")
        return loc, f"must be {' or '.join(kinds)}{got}"
    return loc, phrases[0]


def fields_at(model: type[BaseModel], path: Sequence[str]) -> list[str] | None:
    """The field names of the model found at `path` inside `model` (through mappings and lists of models: a key or
    index in `path` steps into one), or None when no model is there."""
    node: Any = model
    for part in path:
        if get_origin(node) in (dict, list):  # `models: dict[str, ModelSpec]`, `methods: list[MethodSpec]`
            node = get_args(node)[-1]
        elif isinstance(node, type) and issubclass(node, BaseModel) and part in node.model_fields:
            node = node.model_fields[part].annotation
        else:
            return None
    return list(node.model_fields) if isinstance(node, type) and issubclass(node, BaseModel) else None


def _is_tag(part: Any) -> bool:
    """A union member's tag in a location (`int`, `list[int]`, `function-after[...]`), not a field name."""
    return isinstance(part, str) and bool(re.search(r"[\[\]()]", part) or part in _TAGS)


_TAGS = frozenset({"int", "float", "str", "bool", "list", "dict", "tuple", "none", "None", "literal"})


def where(loc: Sequence[str], prefix: str = "") -> str:
    """A location as the spec writes it: `models.qwen.backend` (`prefix` first, when given)."""
    return ".".join([p for p in (prefix, *loc) if p])
