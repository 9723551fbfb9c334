"""Declared parameters: every method and benchmark declares a `Params` model (each field with its default, its
options or range and a one-line description); the rest is refused, one line naming the field."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

from evoarena.wording import did_you_mean, first_error, unknown


class ParamError(ValueError):
    """A parameter that is unknown or of the wrong type; the message is one line naming it."""


class Params(BaseModel):
    """Base of a method's or benchmark's declared params: unknown names are refused, values are read-only and
    nothing is converted but an int given for a float ("3" is no int; a tuple field takes a list only with
    `Field(strict=False)`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class DefaultsParams(Params):
    """Params built from a plain `defaults = {...}` dict (an older user's class): read as `params["name"]` too."""

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def get(self, name: str, default: Any = None) -> Any:
        return getattr(self, name, default)


def closest(name: str, known: Iterable[str]) -> str:
    """` — did you mean 'X'?` for the nearest known name, or '' when none is close (`wording.did_you_mean`)."""
    return did_you_mean(name, known)


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


def type_name(annotation: Any) -> str:
    """A field's type as a reader writes it: `int`, `str | null`, `list[str]` (a Literal by its values' type)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return " | ".join(dict.fromkeys("null" if a is None else type(a).__name__ for a in args))
    if origin is Annotated:
        return type_name(args[0])
    if origin in (Union, UnionType):
        return " | ".join(dict.fromkeys(type_name(a) for a in args))
    if origin is not None:
        inner = ", ".join("..." if a is Ellipsis else type_name(a) for a in args)
        return f"{origin.__name__}[{inner}]" if inner else origin.__name__
    if annotation is Any:
        return "any"
    return "null" if annotation is NoneType else str(getattr(annotation, "__name__", annotation))


def field_rows(model: type[BaseModel]) -> list[dict[str, Any]]:
    """Each field of `model`: name, type, default, allowed values (a Literal's), range (`>= 1`, `< 1`) and
    description, for listings and the docs' parameter tables."""
    rows = []
    for name, f in model.model_fields.items():
        allowed = [a for arg in _members(f.annotation) if get_origin(arg) is Literal for a in get_args(arg)]
        bounds = [f"{sign} {getattr(m, attr)}" for m in f.metadata
                  for attr, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")) if hasattr(m, attr)]
        default = to_jsonable_python(f.get_default(call_default_factory=True))
        rows.append({"name": name, "type": type_name(f.annotation), "default": default,
                     "allowed": allowed or None, "range": ", ".join(bounds) or None,
                     "description": f.description or ""})
    return rows


def params_table(model: type[BaseModel]) -> str:
    """`model`'s fields as the Markdown table of a doc page's params (param, type, default, values, meaning)."""
    if not model.model_fields:
        return "No params (an unknown one is refused).\n"
    lines = ["| param | type | default | values | meaning |", "|---|---|---|---|---|"]
    for r in field_rows(model):
        shown = [a if isinstance(a, str) else json.dumps(a) for a in r["allowed"] or ()]
        values = ", ".join(f"`{a}`" for a in shown) if shown else r["range"] or ""
        default = json.dumps(r["default"], ensure_ascii=False)
        cells = [f"`{r['name']}`", r["type"].replace(" | ", " or "), f"`{default}`", values, r["description"]]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _members(annotation: Any) -> tuple[Any, ...]:
    return get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)



def _one_line(where: str, model: type[BaseModel], err: ValidationError, also: Iterable[str]) -> str:
    loc, phrase = first_error(err)
    kind = err.errors()[0]["type"]
    if kind == "extra_forbidden":
        known = sorted([*model.model_fields, *also])
        return f"{where}: {unknown('param', loc[0], known)}"
    if kind == "value_error" and not loc:  # the model's own check; one of the whole model names its field first
        field, _, rest = phrase.partition(": ")
        if field in model.model_fields:
            loc, phrase = [field], rest
    return f"{where}{'.' + '.'.join(loc) if loc else ''}: {phrase}"


def check_params(where: str, model: type[BaseModel], params: Mapping[str, Any], also: Iterable[str] = ()) -> Any:
    """`params` validated against `model` (the defaults filled in); the first problem raised as a one-line
    ParamError naming the field (an unknown name with the closest known one; `also`: names accepted elsewhere)."""
    try:
        return model.model_validate(dict(params))
    except ValidationError as err:
        raise ParamError(_one_line(where, model, err, also)) from None
