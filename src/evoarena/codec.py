"""The one codec for records: a dataclass or pydantic model to plain JSON values and back, through a pydantic
`TypeAdapter` made once per type. Plain values are what `json.loads` could give (dicts, lists, str, numbers, bool,
None); tuples become lists, nested records dicts, keys keep the order of the record's fields.

`to_text` is `json.dumps` of `to_plain`, so a caller names the exact bytes it writes (sort_keys, indent, …) and a
stored form does not change when a record moves to this codec. A float JSON cannot hold (inf, nan) stays a float,
as it would in `dataclasses.asdict`; a field marked `Field(exclude=True)` or `Field(exclude_if=...)` is left out."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import TypeAdapter

T = TypeVar("T")


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _adapter(tp: Any) -> TypeAdapter[Any]:
    """The adapter of `tp`, built once (building one costs far more than using it); two threads racing build it
    twice and keep either, which is harmless."""
    adapter = _ADAPTERS.get(tp)
    if adapter is None:
        adapter = _ADAPTERS[tp] = TypeAdapter(tp)
    return adapter


def to_plain(obj: object, *, exclude_none: bool = False) -> Any:
    """`obj` (a dataclass, a pydantic model, or a list or tuple of them) as plain JSON values; `exclude_none` drops
    fields that are None. A list is dumped item by item through each item's own type, so the fields its records
    exclude stay excluded (pydantic, dumping a record it meets under `Any`, would not ask its fields)."""
    if isinstance(obj, list | tuple):
        return [to_plain(item, exclude_none=exclude_none) for item in obj]
    return _adapter(type(obj)).dump_python(obj, mode="json", exclude_none=exclude_none)


def from_plain(tp: type[T], data: Any) -> T:
    """The `tp` that `data` (plain values, e.g. from `to_plain` or `json.loads`) describes, checked:
    `pydantic.ValidationError` when it is not one."""
    value: T = _adapter(tp).validate_python(data)
    return value


def to_text(obj: object, **json_opts: Any) -> str:
    """`obj`'s plain form as one JSON string; `json_opts` go to `json.dumps` (sort_keys, indent, ensure_ascii, …)."""
    return json.dumps(to_plain(obj), **json_opts)
