"""Declared parameters: every method and benchmark lists what it accepts with a default; the rest is refused."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any


class ParamError(ValueError):
    """A parameter that is unknown or of the wrong type; the message is one line naming it."""


def closest(name: str, known: Iterable[str]) -> str:
    """' (did you mean X?)' for the nearest known name, or '' when none is close."""
    match = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {match[0]}?)" if match else ""


def _type_ok(default: Any, value: Any) -> bool:
    if default is None or value is None:
        return True  # a None default takes any value; None leaves the default's meaning to the owner
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(default, list | tuple):
        return isinstance(value, list | tuple)
    return isinstance(value, type(default))


def check_params(where: str, defaults: Mapping[str, Any], params: Mapping[str, Any],
                 extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`params` over `defaults`, refusing unknown names and values whose type differs from the default's.
    `extra` are accepted names beyond the defaults (with their own defaults), e.g. a method's `update_note`."""
    allowed = {**(extra or {}), **defaults}
    for name in params:
        if name not in allowed:
            raise ParamError(f"{where}: unknown param {name!r}{closest(name, allowed)} "
                             f"(known: {', '.join(sorted(allowed)) or 'none'})")
    for name, value in params.items():
        if not _type_ok(allowed[name], value):
            raise ParamError(f"{where}.{name}: expected {type(allowed[name]).__name__} like the default "
                             f"{allowed[name]!r}, got {type(value).__name__} {value!r}")
    return {**defaults, **params}
