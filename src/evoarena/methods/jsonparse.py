"""Lenient-but-strict JSON extraction from model output: try candidate spans in order, adopt the first that parses
to the wanted type, otherwise None (the caller rejects and records the output)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

_FENCED = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def whole_and_fenced(text: str) -> list[str]:
    """The whole text, then every ```json (or bare ```) block."""
    return [text.strip(), *_FENCED.findall(text)]


def first_json(candidates: Iterable[str], want: type | tuple[type, ...]) -> Any | None:
    for cand in candidates:
        try:
            value = json.loads(cand)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(value, want):
            return value
    return None


def leading_object(text: str) -> str | None:
    """The first complete JSON object in `text` (from its first `{`, trailing prose ignored), as text; None when
    there is none. A small model often follows its JSON with a sentence."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        _, end = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return None
    return text[start:end]
