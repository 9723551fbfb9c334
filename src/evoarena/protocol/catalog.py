"""The catalog: the registry with every built-in and every installed plugin loaded, and the typed lookups the
runner and the CLI use. It is the one place that imports the method, benchmark and scripted-policy packages."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evoarena.api import REGISTRY, Benchmark, Entry, Kind, Method, Registry, UnknownName, load_plugins
from evoarena.models import Backend, Policy, ProviderError, build_backend
from evoarena.spec import ExperimentSpec, SpecError

_loaded = False
_lock = threading.Lock()


def catalog() -> Registry:
    """The registry, filled once per process: built-in methods, benchmarks, scripted policies and report views,
    then the `evoarena.plugins` entry points of installed packages."""
    global _loaded
    with _lock:
        if not _loaded:
            import evoarena.benchmarks
            import evoarena.methods
            import evoarena.scripted  # noqa: F401  (registers on import)

            load_plugins(REGISTRY)
            _loaded = True
    return REGISTRY


def _typed(kind: Kind, name: str, base: type, search: Iterable[Path]) -> Any:
    obj = catalog().get(kind, name, search)
    if not (inspect.isclass(obj) and issubclass(obj, base)):
        raise UnknownName(f"{kind} {name!r} is not a subclass of evoarena.api.{base.__name__}")
    return obj


def method_class(name: str, search: Iterable[Path] = ()) -> type[Method]:
    """The Method subclass a spec names (a registered name or `module:Name`)."""
    cls: type[Method] = _typed("method", name, Method, search)
    return cls


def benchmark_class(name: str, search: Iterable[Path] = ()) -> type[Benchmark]:
    """The Benchmark subclass a spec names (a registered name or `module:Name`)."""
    cls: type[Benchmark] = _typed("benchmark", name, Benchmark, search)
    return cls


def build_method(name: str, params: Mapping[str, Any], search: Iterable[Path] = ()) -> Method:
    return method_class(name, search)(**params)


def build_benchmark(name: str, params: Mapping[str, Any], search: Iterable[Path] = ()) -> Benchmark:
    return benchmark_class(name, search)(**params)


def policy(name: str, search: Iterable[Path] = ()) -> Policy:
    """A scripted policy by registered name or `module:function`."""
    fn = catalog().get("policy", name, search)
    if not callable(fn):
        raise UnknownName(f"policy {name!r} is not callable")
    result: Policy = fn
    return result


def backend_of(spec: ExperimentSpec, name: str, search: Iterable[Path] = ()) -> Backend:
    """The backend of the spec's model `name` (a scripted one with its policy); one that cannot be made, such as an
    endpoint whose API-key variable is unset, is a one-line SpecError naming the model."""
    where = tuple(search)
    try:
        return build_backend(spec.models[name], lambda policy_name: policy(policy_name, where))
    except ProviderError as err:
        raise SpecError(f"models.{name}: {err}") from None


def entries(kind: Kind) -> list[Entry]:
    """Every registered entry of one kind, by name."""
    return catalog().entries(kind)
