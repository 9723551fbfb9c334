"""Method state kept as harness files in one JSON form: a typed state (a pydantic model) as one sorted, indented
document, or a log of records as JSON lines. Malformed state is a one-line HarnessStateError naming the file."""

from __future__ import annotations

import json
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, ValidationError, model_serializer

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

Absent = Annotated[T | None, Field(exclude_if=lambda v: v is None)]
"""A field left out of the file while it is None (give it `= None`): a state whose key appears only once set."""


class Given(BaseModel):
    """A record written with exactly the keys it was given (by its maker or its file): for records whose keys differ
    by kind, where one kind has a key as null and another lacks it. Its fields take no aliases."""

    @model_serializer(mode="wrap")
    def _given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if k in self.model_fields_set}


class HarnessStateError(ValueError):
    """A state file that does not parse as its model; the message is one line naming the file and the first fault."""


def state_text(value: BaseModel) -> str:
    """The file text of a state: its JSON with sorted keys, one-space indent, non-ASCII kept, a final newline."""
    return json.dumps(value.model_dump(mode="json", by_alias=True), indent=1, ensure_ascii=False,
                      sort_keys=True) + "\n"


def record_line(value: BaseModel) -> str:
    """One record of a JSON-lines log: compact JSON with sorted keys and a newline."""
    return json.dumps(value.model_dump(mode="json", by_alias=True), ensure_ascii=False, sort_keys=True) + "\n"


def parse_state(rel: str, text: str, model: type[M]) -> M:
    try:
        return model.model_validate_json(text)
    except ValidationError as err:
        raise HarnessStateError(f"{rel!r}: not a valid {model.__name__}: {_first(err)}") from None


def parse_records(rel: str, text: str, model: type[M]) -> list[M]:
    """The records of a JSON-lines log, blank lines skipped; a bad line is named by its number."""
    out: list[M] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(model.model_validate_json(line))
        except ValidationError as err:
            raise HarnessStateError(f"{rel!r} line {n}: not a valid {model.__name__}: {_first(err)}") from None
    return out


def _first(err: ValidationError) -> str:
    e = err.errors()[0]
    where = ".".join(str(p) for p in e["loc"])
    return f"{where}: {e['msg']}" if where else str(e["msg"])
