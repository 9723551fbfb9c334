"""The `reasoning_gym` package behind one small interface: dataset names, config checking with one-line errors, and
building a seeded dataset. The package is imported lazily, so evoarena starts without paying for it."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from evoarena.api import ParamError
from evoarena.wording import did_you_mean

RESERVED = ("seed", "size")
"""Config fields the benchmark sets itself (from `seed` and the split sizes)."""


class GymError(ParamError):
    """A dataset or config that reasoning_gym cannot use; one line naming the param. A ParamError, so the spec check
    reports it before a run starts."""


def _registry() -> dict[str, tuple[type, type]]:
    try:
        factory = import_module("reasoning_gym.factory")
        import_module("reasoning_gym")  # registers every dataset
    except ImportError as err:
        raise GymError(f"benchmark reasoning_gym: the reasoning-gym package is not installed ({err}); "
                       "pip install 'evoarena[tasks]'") from None
    datasets: dict[str, tuple[type, type]] = factory.DATASETS
    return datasets


def package_version() -> str:
    try:
        return version("reasoning-gym")
    except PackageNotFoundError:
        return "unknown"


def dataset_names() -> list[str]:
    return sorted(_registry())


def _coerce(field: dataclasses.Field[Any], value: Any) -> Any:
    """YAML gives lists and strings; the dataclass may want a tuple or an enum member."""
    default = field.default
    if isinstance(default, tuple) and isinstance(value, list):
        return tuple(value)
    if isinstance(default, enum.Enum) and isinstance(value, str):
        try:
            return type(default)(value)
        except ValueError:
            known = ", ".join(str(m.value) for m in type(default))
            raise GymError(f"benchmark.params.config.{field.name}: {value!r} is not one of {known}") from None
    return value


def make_config(name: str, config: Mapping[str, Any], *, seed: int, size: int) -> Any:
    """The dataset's config dataclass from `config` plus `seed` and `size`, validated by the dataset's own rules."""
    registry = _registry()
    if name not in registry:
        known = sorted(registry)
        raise GymError(f"benchmark.params.dataset: unknown reasoning_gym dataset {name!r}"
                       f"{did_you_mean(name, known, n=3)} ({len(known)} datasets: "
                       "docs/benchmarks/reasoning_gym.md says how to list them)")
    _, config_cls = registry[name]
    fields = {f.name: f for f in dataclasses.fields(config_cls)}
    for key in config:
        if key in RESERVED:
            raise GymError(f"benchmark.params.config.{key}: set by the benchmark (use the `seed` param and the "
                           "split sizes n_train/n_val/n_test)")
        if key not in fields:
            usable = sorted(set(fields) - set(RESERVED))
            raise GymError(f"benchmark.params.config.{key}: not a field of {name}'s config"
                           f"{did_you_mean(key, usable, n=3)} (fields: {', '.join(usable)})")
    values = {k: _coerce(fields[k], v) for k, v in config.items()}
    try:
        cfg = config_cls(**values, seed=seed, size=size)
        if hasattr(cfg, "validate"):
            cfg.validate()
    except (AssertionError, ValueError, TypeError, KeyError) as err:
        why = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise GymError(f"benchmark.params.config: {name} refuses this config ({why})") from None
    return cfg


def make_dataset(name: str, config: Mapping[str, Any], *, seed: int, size: int) -> Any:
    """A seeded reasoning_gym dataset of `size` items (items are generated on demand, one per index)."""
    cfg = make_config(name, config, seed=seed, size=size)
    dataset_cls, _ = _registry()[name]
    return dataset_cls(config=cfg)


def default_system_prompt() -> str:
    """reasoning_gym's own default system prompt (answers inside <answer> tags)."""
    prompts: dict[str, str] = import_module("reasoning_gym.utils").SYSTEM_PROMPTS
    return prompts["default"]


def extract_tag(text: str) -> str | None:
    """reasoning_gym's own answer extraction: the text inside the last <answer>…</answer>, stripped."""
    found: str | None = import_module("reasoning_gym.utils").extract_answer(text)
    return found
