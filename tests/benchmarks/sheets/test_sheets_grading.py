"""Grading: references pass their own grader, wrong programs get cell-level practice feedback, formulas are
recomputed and graded by value, and the test split is told numbers only."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest

from evoarena.api import Task
from evoarena.benchmarks.sheets import SheetsBenchmark
from evoarena.benchmarks.sheets.core import Case, SheetTask
from evoarena.benchmarks.sheets.driver import normalize
from evoarena.benchmarks.sheets.families import DEFAULT_FAMILIES
from evoarena.benchmarks.sheets.generate import draw_task
from evoarena.benchmarks.sheets.grading import Grade

RunLocal = Callable[[str, SheetTask], Grade]

COPY = "import shutil\n\ndef solve(input_path, output_path):\n    shutil.copyfile(input_path, output_path)\n"


@pytest.mark.parametrize("family", DEFAULT_FAMILIES)
def test_every_family_reference_passes_its_own_grader(family: str, run_local: RunLocal) -> None:
    for seed in (0, 1):
        task = draw_task(seed, "train", 0, family)
        grade = run_local(task.reference_program, task)
        assert grade.hard and grade.cell == 1.0, (family, seed, [c.wrong[:2] for c in grade.cases])


def test_reference_passes_in_the_sandbox_and_a_wrong_program_gets_cell_feedback() -> None:
    bench = SheetsBenchmark(tasks=11, families=["running_total"])
    task = next(t for t in bench.build() if t.split == "train")
    right = bench.grade(task, bench.parse(f"```python\n{task.reference}```").answer)
    assert (right.score, right.passed) == (1.0, True)
    wrong = bench.grade(task, COPY)
    assert wrong.passed is False and wrong.score == 0.0
    first = task.meta["target"].split("!")[1].split(":")[0]
    assert "Case 1: 0 of " in wrong.message and f"{first} expected" in wrong.message and "got (empty)" in wrong.message
    assert "(and " in wrong.message  # only the first few cells per case are shown


def test_test_split_feedback_has_numbers_only_and_diagnostics_give_hard_and_cell() -> None:
    bench = SheetsBenchmark(tasks=11, families=["fill_down"])
    task = next(t for t in bench.build() if t.split == "test")
    fb = bench.grade(task, COPY)
    assert "expected" not in fb.message and "hard fail" in fb.message
    diag = bench.diagnose(task, COPY)
    assert diag is not None and diag["hard"] is False and diag["cell"] == pytest.approx(fb.score)
    assert 0.0 < fb.score < 1.0  # the first row of each block was already right
    # nothing of the test split stays in the benchmark, which a method's context can reach
    assert all(not key.startswith("test") for key in bench._tasks) and not bench._grades


def test_unparsable_and_failing_programs_score_zero() -> None:
    bench = SheetsBenchmark(tasks=11, families=["lookup"])
    task = bench.build()[0]
    assert bench.parse("no code here").answer is None
    assert bench.grade(task, None).score == 0.0
    crash = bench.grade(task, "def solve(input_path, output_path):\n    raise KeyError('Sheet9')\n")
    assert crash.score == 0.0 and "solve raised KeyError" in crash.message
    broken = bench.grade(task, "def solve(input_path, output_path)\n")
    assert broken.score == 0.0 and "could not be loaded: SyntaxError" in broken.message


FORMULAS = """
from openpyxl import load_workbook

def solve(input_path, output_path):
    wb = load_workbook(input_path)
    ws = wb["Data"]
    ws["D2"] = '=SUMIF(A:A,"north",B:B)'
    ws["D3"] = "=COUNTIF(A2:A6,\\"south\\")"
    ws["D4"] = "=D2*2"
    ws["D5"] = '=PROPER(TRIM(C2))'
    ws["D6"] = '=IF(B2>B3,"Yes","No")'
    ws["D7"] = "=VLOOKUP(\\"east\\",A2:B6,2,FALSE)"
    wb.save(output_path)
"""


def _formula_task() -> tuple[SheetsBenchmark, Task]:
    rows: list[list[Any]] = [["Region", "Amount", "Name"], ["north", 10, "  aNA   silva "], ["south", 2.5, None],
                             ["north", 4, None], ["east", 7, None], ["south", 1, None]]  # fmt: skip
    expected = {"Data!D2": 14, "Data!D3": 2, "Data!D4": 28, "Data!D5": "Ana Silva", "Data!D6": "Yes", "Data!D7": 7}
    st = SheetTask("train-900", "custom", "formulas", "Data!D2:D7", (Case(expected, input_sheets={"Data": rows}),))
    bench = SheetsBenchmark(tasks=11)
    bench._tasks[st.id] = st
    return bench, Task(st.id, "train", st.id, "", "")


def test_formulas_written_into_cells_are_recomputed_and_graded_by_value() -> None:
    bench, task = _formula_task()
    fb = bench.grade(task, FORMULAS)
    assert fb.passed, fb.message
    assert bench.run(bench._tasks[task.id], FORMULAS).cases[0].formulas == 6


def test_values_compare_like_spreadsheetbench() -> None:
    import datetime

    assert normalize("") is None and normalize(None) is None
    assert normalize(3) == normalize("3.0") == normalize(3.004) == 3.0
    assert normalize(True) == 1.0
    assert normalize(datetime.datetime(2023, 3, 5)) == normalize(datetime.date(2023, 3, 5)) == 44990.0
    assert normalize(datetime.time(9, 30)) == "09:30"
    assert normalize(" x ") == " x " and normalize("#N/A") == "#N/A"


def test_loaded_workbook_roundtrip_sanity() -> None:
    from openpyxl import load_workbook

    from evoarena.benchmarks.sheets.layout import workbook_bytes

    data = workbook_bytes({"S": [[None, "a"], [1.5, None]]})
    ws = load_workbook(io.BytesIO(data))["S"]
    assert ws["B1"].value == "a" and ws["A2"].value == 1.5 and ws["A1"].value is None
