"""Declared parameters: every method and benchmark declares a `Params` model (each field with its default, its
options or range and a one-line description); the rest is refused, one line naming the field."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError, create_model
from pydantic.fields import FieldInfo


class ParamError(ValueError):
    """A parameter that is unknown or of the wrong type; the message is one line naming it."""


class Params(BaseModel):
    """Base of a method's or benchmark's declared params: unknown names are refused and the values are read-only."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class DefaultsParams(Params):
    """Params built from a plain `defaults = {...}` dict (an older user's class): read as `params["name"]` too."""

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def get(self, name: str, default: Any = None) -> Any:
        return getattr(self, name, default)


def closest(name: str, known: Iterable[str]) -> str:
    """' (did you mean X?)' for the nearest known name, or '' when none is close."""
    match = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {match[0]}?)" if match else ""


def _annotation(default: Any) -> Any:
    """The type a plain default admits, as the defaults dict always meant it: a None default takes anything; an int
    an int, not a bool; a float an int or float; a list or tuple either."""
    if default is None:
        return Any
    if isinstance(default, bool):
        return StrictBool | None
    if isinstance(default, int):
        return StrictInt | None
    if isinstance(default, float):
        return StrictInt | StrictFloat | None
    if isinstance(default, str):
        return StrictStr | None
    if isinstance(default, list | tuple):
        return list[Any] | tuple[Any, ...] | None
    if isinstance(default, dict):
        return dict[Any, Any] | None
    return Any


def params_from_defaults(name: str, defaults: Mapping[str, Any]) -> type[DefaultsParams]:
    """A Params model for a class that declares only `defaults`: each name's type taken from its default."""
    fields: dict[str, Any] = {k: (_annotation(v), FieldInfo(default=v)) for k, v in defaults.items()}
    return create_model(f"{name}Params", __base__=DefaultsParams, **fields)


def field_defaults(model: type[BaseModel]) -> dict[str, Any]:
    """Every field's default, in declaration order (what `defaults` listed before Params models)."""
    return {k: f.get_default(call_default_factory=True) for k, f in model.model_fields.items()}


def as_dict(params: BaseModel) -> dict[str, Any]:
    """The params as JSON values, every field in declaration order: the defaults with the given values over them."""
    return params.model_dump(mode="json")


def _one_line(where: str, model: type[BaseModel], err: ValidationError, also: Iterable[str]) -> str:
    first = err.errors()[0]
    loc = [str(p) for p in first["loc"]]
    if first["type"] == "extra_forbidden":
        name = loc[0]
        known = [*model.model_fields, *also]
        return f"{where}: unknown param {name!r}{closest(name, known)} (known: {', '.join(sorted(known)) or 'none'})"
    name, value = loc[0], first.get("input")
    said = [" ".join(str(e["msg"]).split()) for e in err.errors() if e["loc"][:1] == first["loc"][:1]]
    msg = " or ".join([said[0], *(m.removeprefix("Input should be ") for m in said[1:])])  # a union's members
    return f"{where}.{name}: {msg[:1].lower()}{msg[1:]}, got {type(value).__name__} {value!r}"


def check_params(where: str, model: type[BaseModel], params: Mapping[str, Any], also: Iterable[str] = ()) -> Any:
    """`params` validated against `model` (the defaults filled in); the first problem raised as a one-line
    ParamError naming the field (an unknown name with the closest known one; `also`: names accepted elsewhere)."""
    try:
        return model.model_validate(dict(params))
    except ValidationError as err:
        raise ParamError(_one_line(where, model, err, also)) from None
