"""Drawing the generated benchmark: split sizes in the seed's 2:1:8 ratio, families cycled within each split,
one seeded draw per task (a task's content depends only on the seed, its split and its index)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from evoarena.api import Split
from evoarena.benchmarks.sheets.core import SheetTask
from evoarena.benchmarks.sheets.families import FAMILIES
from evoarena.benchmarks.sheets.reference import render_program

SPLITS: tuple[Split, ...] = ("train", "val", "test")


def split_sizes(total: int, ratio: Sequence[int]) -> dict[Split, int]:
    """`total` tasks in the ratio train:val:test (rounded; test takes the rest)."""
    weight = sum(ratio)
    train = round(total * ratio[0] / weight)
    val = round(total * ratio[1] / weight)
    return {"train": train, "val": val, "test": max(total - train - val, 0)}


def draw_task(seed: int, split: Split, index: int, family_name: str) -> SheetTask:
    r = random.Random(f"sheets:{seed}:{split}:{index}")
    family = FAMILIES[family_name]
    draw = family.draw(r)
    template = family.wording(r, draw.params)
    stated = template.program_params(draw.params)
    return SheetTask(
        id=f"{split}-{index:03d}",
        family=family.name,
        instruction=template.render(draw.params),
        target=draw.target,
        cases=draw.cases,
        instruction_type=draw.instruction_type,
        reference_program=render_program(family.name, stated, draw.target),
        params=stated,
        source_id=str(index),
    )


def generate_tasks(
    seed: int, total: int, families: Sequence[str], ratio: Sequence[int]
) -> list[tuple[Split, SheetTask]]:
    """Every task of every split. Families cycle in the given order, continuing from one split to the next, so
    each split mixes them and the first families are in train even when train is small."""
    out: list[tuple[Split, SheetTask]] = []
    offset = 0
    for split, size in split_sizes(total, ratio).items():
        for i in range(size):
            out.append((split, draw_task(seed, split, i, families[(offset + i) % len(families)])))
        offset += size
    return out
