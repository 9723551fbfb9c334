"""Checks for the plain values a method's process sends the cell: each returns the value or raises TypeError."""

from __future__ import annotations

from typing import Any

from evoarena.models import GenParams


def gen_params(params: object) -> GenParams:
    """Generation parameters from their JSON form (`stop` and `tools` arrive as lists)."""
    if not isinstance(params, dict):
        raise TypeError("expected generation parameters (a mapping)")
    return GenParams.from_dict(params)


def as_list(value: object) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def as_text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def as_int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"expected an integer, got {type(value).__name__}")
    return value
