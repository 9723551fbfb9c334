"""One registry for what a spec can name: methods, benchmarks, scripted policies and report views.

Built-ins register by decorator when their package is imported; installed plugins through the entry-point group
`evoarena.plugins` (each entry names a module, whose decorators register, or a `register(registry)` function); a
spec may also name any of them as `module:Name`, imported from the current directory or the spec's directory.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from evoarena.api.params import field_rows
from evoarena.wording import unknown

Kind = Literal["method", "benchmark", "policy", "view"]
KINDS: tuple[Kind, ...] = ("method", "benchmark", "policy", "view")
PLUGIN_GROUP = "evoarena.plugins"
T = TypeVar("T")


class UnknownName(LookupError):
    """A name no registry entry and no importable `module:Name` answers to; one line with the closest names."""

    def __str__(self) -> str:
        return str(self.args[0])


class PluginError(ImportError):
    """An installed plugin that failed to load; one line naming the entry point."""


@dataclass(frozen=True)
class Entry:
    """A registered object and where it came from (`builtin`, `plugin:<entry point>`, or `path`)."""

    kind: Kind
    name: str
    obj: Any
    origin: str = "builtin"

    @property
    def description(self) -> str:
        """The first line of the object's own docstring, else of its module's (built-in methods keep theirs there)."""
        own = vars(self.obj).get("__doc__") if inspect.isclass(self.obj) else getattr(self.obj, "__doc__", None)
        module = inspect.getmodule(self.obj)
        for doc in (own, module.__doc__ if module else None):
            if doc and doc.strip():
                return " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())
        return ""

    @property
    def params(self) -> dict[str, Any]:
        return dict(getattr(self.obj, "defaults", {}) or {})

    @property
    def fields(self) -> list[dict[str, Any]] | None:
        """A method's or benchmark's declared params, field by field (see `field_rows`); None for the rest."""
        model = getattr(self.obj, "Params", None)
        return field_rows(model) if isinstance(model, type) and issubclass(model, BaseModel) else None


class Registry:
    """Entries by kind and name. Registering one name twice with different objects is an error."""

    def __init__(self) -> None:
        self._entries: dict[str, dict[str, Entry]] = {k: {} for k in KINDS}
        self.origin = "builtin"  # what `add` records while plugins load

    def add(self, kind: Kind, name: str, obj: Any) -> None:
        known = self._entries[kind].get(name)
        if known is not None and known.obj is not obj:
            raise ValueError(f"{kind} {name!r} is registered twice ({known.origin} and {self.origin})")
        self._entries[kind][name] = Entry(kind, name, obj, self.origin)

    def names(self, kind: Kind) -> list[str]:
        return sorted(self._entries[kind])

    def entries(self, kind: Kind) -> list[Entry]:
        return [self._entries[kind][n] for n in self.names(kind)]

    def has(self, kind: Kind, name: str) -> bool:
        return name in self._entries[kind]

    def get(self, kind: Kind, name: str, search: Iterable[Path] = ()) -> Any:
        """The object named `name`, or for `module:Name` the attribute imported from that module (searched for
        also in `search`, e.g. the spec's directory). Unknown names raise UnknownName with the closest names."""
        if ":" in name:
            return import_ref(kind, name, search)
        if name not in self._entries[kind]:
            known = self.names(kind)
            raise UnknownName(unknown(kind, name, known, "or module:Name for your own"))
        return self._entries[kind][name].obj


REGISTRY = Registry()


def _register(kind: Kind, name: str) -> Callable[[T], T]:
    def deco(obj: T) -> T:
        if inspect.isclass(obj) and kind in ("method", "benchmark") and "name" not in vars(obj):
            obj.name = name  # type: ignore[attr-defined]
        REGISTRY.add(kind, name, obj)
        return obj

    return deco


def method(name: str) -> Callable[[T], T]:
    """Class decorator: register an evolution method under `name` (also its `name` attribute)."""
    return _register("method", name)


def benchmark(name: str) -> Callable[[T], T]:
    """Class decorator: register a benchmark under `name`."""
    return _register("benchmark", name)


def policy(name: str) -> Callable[[T], T]:
    """Function decorator: register a scripted-model policy `(messages, params) -> text` under `name`."""
    return _register("policy", name)


def view(name: str) -> Callable[[T], T]:
    """Decorator: register a report view (a section of results.json and report.html) under `name`."""
    return _register("view", name)


def import_ref(kind: Kind, ref: str, search: Iterable[Path] = ()) -> Any:
    """Import `module:Name`, with the current directory and `search` on the import path."""
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise UnknownName(f"{kind} {ref!r}: expected module:Name")
    for path in [Path.cwd(), *search]:
        entry = str(Path(path).resolve())
        if entry not in sys.path:
            sys.path.insert(0, entry)
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise UnknownName(f"{kind} {ref!r}: cannot import {module_name} ({err})") from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UnknownName(f"{kind} {ref!r}: {module_name} has no {attr}")
        obj = getattr(obj, part)
    if inspect.isclass(obj) and kind in ("method", "benchmark") and not getattr(obj, "name", None):
        obj.name = ref
    return obj


def load_plugins(registry: Registry = REGISTRY) -> list[str]:
    """Load every installed `evoarena.plugins` entry point once; returns their names."""
    loaded = []
    for ep in entry_points(group=PLUGIN_GROUP):
        previous, registry.origin = registry.origin, f"plugin:{ep.name}"
        try:
            obj = ep.load()
            if callable(obj) and not inspect.isclass(obj):
                obj(registry)
        except Exception as err:  # a broken plugin is named, not a traceback
            raise PluginError(f"plugin {ep.name!r} ({ep.value}) failed to load: {type(err).__name__}: {err}") from None
        finally:
            registry.origin = previous
        loaded.append(ep.name)
    return loaded
