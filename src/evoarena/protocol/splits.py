"""Splitting tasks, and locking the test split so that only the evaluator can grade it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from evoarena.api import Task, TaskView


class LockedTestSplit:
    """Holds the test tasks; hands them out once, to the evaluator, and hashes them at start."""

    __test__ = False

    def __init__(self, tasks: Sequence[Task]) -> None:
        self._tasks = tuple(tasks)
        self.hash = hashlib.sha256("\n".join(t.payload_hash() for t in self._tasks).encode()).hexdigest()
        self.size = len(self._tasks)

    def __iter__(self) -> Iterator[Task]:
        raise TypeError("the test split is locked; only evoarena.protocol.evaluator grades it")

    def release_to_evaluator(self) -> tuple[Task, ...]:
        return self._tasks


@dataclass(frozen=True)
class PracticeSplits:
    """What the evolution side may hold: train and val tasks (with references, for grading)."""

    train: tuple[Task, ...]
    val: tuple[Task, ...]
    _views: dict[str, tuple[TaskView, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:  # made once: every practice step hands the method these
        object.__setattr__(self, "_views", {"train": tuple(t.view() for t in self.train),
                                            "val": tuple(t.view() for t in self.val)})

    def views(self, split: str) -> tuple[TaskView, ...]:
        return self._views["train" if split == "train" else "val"]


def split_tasks(tasks: Sequence[Task]) -> tuple[PracticeSplits, LockedTestSplit]:
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError("benchmark produced duplicate task ids")
    train = tuple(t for t in tasks if t.split == "train")
    val = tuple(t for t in tasks if t.split == "val")
    test = [t for t in tasks if t.split == "test"]
    overlap = {t.source_id for t in test} & {t.source_id for t in train + val}
    if overlap:
        raise ValueError(f"test split shares sources with train/val: {sorted(overlap)[:3]}")
    return PracticeSplits(train, val), LockedTestSplit(test)


def task_rows(tasks: Sequence[Task]) -> list[tuple[str, str, str, str, str | None, str | None]]:
    """The store's `tasks` rows: id, split, source, payload hash, the prompt (every split: the viewer shows what the
    solver was asked) and the reference of train tasks only (the labels methods may read; val and test references
    stay with the grader)."""
    return [(t.id, t.split, t.source_id, t.payload_hash(), t.prompt, t.reference if t.split == "train" else None)
            for t in tasks]
