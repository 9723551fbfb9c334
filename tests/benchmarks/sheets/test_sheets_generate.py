"""The generator: deterministic per seed, 2:1:8 splits, every family drawable and its wording readable back."""

from __future__ import annotations

import random

import pytest

from evoarena.benchmarks.sheets import SheetsBenchmark
from evoarena.benchmarks.sheets.core import target_cells
from evoarena.benchmarks.sheets.families import DEFAULT_FAMILIES, FAMILIES, match_instruction
from evoarena.benchmarks.sheets.generate import draw_task, split_sizes
from evoarena.protocol.catalog import benchmark_class, build_benchmark


def test_registered_and_params_checked() -> None:
    assert benchmark_class("sheets") is SheetsBenchmark
    with pytest.raises(ValueError, match=r"benchmark.params \(sheets\).families: unknown \['nope'\]"):
        build_benchmark("sheets", {"families": ["nope"]})
    with pytest.raises(ValueError, match=r"benchmark.params \(sheets\): unknown param .bogus."):
        build_benchmark("sheets", {"bogus": 1})


def test_same_seed_same_tasks_other_seed_other_tasks() -> None:
    a = SheetsBenchmark(seed=3, tasks=22).generate()
    b = SheetsBenchmark(seed=3, tasks=22).generate()
    c = SheetsBenchmark(seed=4, tasks=22).generate()
    assert [(t.id, t.prompt, t.reference, t.meta) for t in a] == [(t.id, t.prompt, t.reference, t.meta) for t in b]
    assert [t.prompt for t in a] != [t.prompt for t in c]
    assert len({t.meta["expected_sha256"] for t in a}) == len(a)


def test_splits_follow_the_seed_ratio() -> None:
    assert split_sizes(44, (2, 1, 8)) == {"train": 8, "val": 4, "test": 32}
    assert split_sizes(11, (2, 1, 8)) == {"train": 2, "val": 1, "test": 8}
    tasks = SheetsBenchmark(tasks=44).build()
    counts = {s: sum(t.split == s for t in tasks) for s in ("train", "val", "test")}
    assert counts == {"train": 8, "val": 4, "test": 32}
    assert len({t.id for t in tasks}) == 44
    families = [t.meta["family"] for t in tasks]
    assert set(families) == set(FAMILIES) and families[0] == "seq_scan"  # the scan family is practised


@pytest.mark.parametrize("family", DEFAULT_FAMILIES)
def test_every_family_draws_varied_tasks_whose_wording_reads_back(family: str) -> None:
    seen_targets, seen_wordings = set(), set()
    for i in range(12):
        task = draw_task(i, "train", 0, family)
        assert len(task.cases) == 3
        cells = target_cells(task.target)
        for case in task.cases:  # every case has the same target cells
            assert [k.split("!")[-1] for k in case.expected] == [c for _, c in cells]
        assert len({tuple(map(str, c.expected.values())) for c in task.cases}) > 1  # different data per case
        found = match_instruction(task.instruction)
        assert found is not None and found[0].name == family
        assert found[1].program_params(found[2]) == task.params
        seen_targets.add(task.target)
        seen_wordings.add(found[1].text)
    assert len(seen_targets) > 3 and len(seen_wordings) > 1


def test_prompt_shows_instruction_preview_target_and_program_form() -> None:
    task = SheetsBenchmark(tasks=11).generate()[0]
    for part in ("### Instruction", "### Workbook", "### Target range", "solve(input_path, output_path)",
                 "Test case 1 of 3", "| A"):  # fmt: skip
        assert part in task.prompt
    assert task.meta["target"] in task.prompt
    assert "def solve(input_path, output_path):" in task.reference


def test_instruction_templates_state_what_the_reference_needs() -> None:
    r = random.Random(0)
    for family in FAMILIES.values():
        for _ in range(5):
            draw = family.draw(r)
            for template in family.templates:
                if all(draw.params.get(k) == v for k, v in template.fixed.items()):
                    assert set(template.names()) <= set(draw.params)
