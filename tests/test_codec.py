"""The record codec: plain values out in the record's field order, the same record back, checked."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Annotated

import pytest
from pydantic import BaseModel, Field, ValidationError

from evoarena.codec import from_plain, to_plain, to_text


@dataclass(frozen=True)
class Inner:
    name: str
    score: float


@dataclass(frozen=True)
class Outer:
    tags: tuple[str, ...]
    inner: Inner
    note: Annotated[str | None, Field(exclude_if=lambda v: v is None)] = None
    hidden: Annotated[int, Field(exclude=True)] = field(default=0, compare=False)


class Model(BaseModel):
    count: int
    items: list[Inner]


def test_a_dataclass_is_plain_values_in_field_order_and_comes_back() -> None:
    rec = Outer(("b", "a"), Inner("x", 0.5), hidden=3)
    plain = to_plain(rec)
    assert plain == {"tags": ["b", "a"], "inner": {"name": "x", "score": 0.5}}
    assert list(plain) == ["tags", "inner"] and json.loads(json.dumps(plain)) == plain
    assert from_plain(Outer, plain) == rec
    assert to_plain(Outer((), Inner("y", 1.0), note="n"))["note"] == "n"


def test_the_text_is_json_dumps_of_asdict_for_a_plain_record() -> None:
    rec = Inner("é", float("inf"))
    assert to_text(rec, sort_keys=True) == json.dumps(asdict(rec), sort_keys=True)
    assert to_text(rec, ensure_ascii=False, indent=2) == json.dumps(asdict(rec), ensure_ascii=False, indent=2)


def test_models_lists_and_none_dropping() -> None:
    m = Model(count=2, items=[Inner("a", 1.0)])
    assert to_plain(m) == {"count": 2, "items": [{"name": "a", "score": 1.0}]}
    assert from_plain(Model, to_plain(m)) == m
    assert to_plain([Inner("a", 1.0)]) == [{"name": "a", "score": 1.0}]
    assert to_plain((Outer((), Inner("a", 1.0), hidden=1),)) == [{"tags": [], "inner": {"name": "a", "score": 1.0}}]
    assert to_plain(Outer((), Inner("a", 1.0)), exclude_none=True) == {"tags": [], "inner": {"name": "a", "score": 1.0}}


def test_from_plain_checks_what_it_reads() -> None:
    with pytest.raises(ValidationError):
        from_plain(Inner, {"name": "a"})
    with pytest.raises(ValidationError):
        from_plain(Outer, {"tags": "ab", "inner": {"name": "a", "score": "high"}})
