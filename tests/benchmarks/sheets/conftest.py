"""Fixtures for the sheets tests: running a (trusted) program in-process on a task's cases, graded exactly like
the sandbox path, so most tests need no sandbox start-up."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evoarena.benchmarks.sheets.core import SheetTask, split_sheet
from evoarena.benchmarks.sheets.driver import read_cells
from evoarena.benchmarks.sheets.execution import CaseRun, ProgramRun
from evoarena.benchmarks.sheets.grading import Grade, grade_run
from evoarena.benchmarks.sheets.layout import workbook_bytes

RunLocal = Callable[[str, SheetTask], Grade]


@pytest.fixture
def run_local(tmp_path: Path) -> RunLocal:
    counter = iter(range(10_000))

    def run(program: str, task: SheetTask) -> Grade:
        namespace: dict[str, Any] = {"__name__": "solution"}
        exec(compile(program, "solution.py", "exec"), namespace)  # noqa: S102 - our own reference programs
        cases = []
        for case in task.cases:
            n = next(counter)
            source, target = tmp_path / f"in{n}.xlsx", tmp_path / f"out{n}.xlsx"
            source.write_bytes(case.input_xlsx or workbook_bytes(case.input_sheets or {}))
            namespace["solve"](str(source), str(target))
            values, styles, missing, formulas, note = read_cells(
                str(target), [split_sheet(k, "") for k in case.expected], False
            )
            cases.append(CaseRun(values, styles=styles, missing_sheets=missing, formulas=formulas, note=note))
        return grade_run(task, ProgramRun(cases, "in-process"))

    return run
