"""What seeded, generated benchmarks share: their seed and split-size params, and drawing distinct items."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import Field

T = TypeVar("T")


def seed_param() -> Any:
    """The `seed` field: what the tasks (and their split) are drawn from."""
    return Field(0, description="Seed of the generated tasks and their split.")


def size_param(split: str, n: int) -> Any:
    """An `n_<split>` field defaulting to `n`: at least 1 test task, any number of train and val tasks."""
    return Field(n, ge=1 if split == "test" else 0, description=f"Tasks in the {split} split.")


def distinct(draw: Callable[[int], T], key: Callable[[T], str], n: int, what: str, tries: int = 10_000) -> list[T]:
    """`n` items from `draw(i)` (i: how many are kept so far) whose keys differ; a ValueError naming `what` when
    `tries` draws in all repeat a key (the generator cannot make that many)."""
    seen: set[str] = set()
    out: list[T] = []
    misses = 0
    while len(out) < n:
        item = draw(len(out))
        if key(item) in seen:
            misses += 1
            if misses > tries:
                raise ValueError(f"benchmark.params: cannot draw {n} distinct {what}")
            continue
        seen.add(key(item))
        out.append(item)
    return out
