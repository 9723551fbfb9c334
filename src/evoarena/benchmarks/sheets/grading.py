"""Grading a program run against a task's reference values: per-case cell accuracy, hard (every target cell of
every case right, SpreadsheetBench's hard restriction), and practice feedback naming wrong cells."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evoarena.benchmarks.sheets.core import SheetTask, split_sheet
from evoarena.benchmarks.sheets.driver import normalize
from evoarena.benchmarks.sheets.execution import ProgramRun

SHOWN_PER_CASE = 3


@dataclass(frozen=True)
class CaseGrade:
    correct: int
    total: int
    wrong: list[tuple[str, Any, Any, str]] = field(default_factory=list)  # (cell, expected, got, colour note)
    error: str | None = None
    note: str | None = None
    formulas: int = 0  # target cells that held a formula and were recomputed

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 1.0


@dataclass(frozen=True)
class Grade:
    cases: list[CaseGrade]
    failure: str | None = None
    isolation: str = ""

    @property
    def cell(self) -> float:
        """Mean over cases of the fraction of target cells that are right."""
        return sum(c.accuracy for c in self.cases) / len(self.cases) if self.cases else 0.0

    @property
    def hard(self) -> bool:
        return bool(self.cases) and all(c.correct == c.total and c.error is None for c in self.cases)

    @property
    def soft(self) -> float:
        """Fraction of cases entirely right (SpreadsheetBench's soft restriction)."""
        right = sum(c.correct == c.total and c.error is None for c in self.cases)
        return right / len(self.cases) if self.cases else 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "hard": self.hard,
            "cell": round(self.cell, 6),
            "soft": round(self.soft, 6),
            "cases": [{"correct": c.correct, "total": c.total, "formulas": c.formulas, "error": c.error}
                      for c in self.cases],  # fmt: skip
            "failure": self.failure,
        }


def grade_run(task: SheetTask, run: ProgramRun) -> Grade:
    out: list[CaseGrade] = []
    for case, got in zip(task.cases, run.cases, strict=True):
        cells = list(case.expected)
        if got.values is None:
            out.append(CaseGrade(0, len(cells), error=got.error or "no values"))
            continue
        wrong: list[tuple[str, Any, Any, str]] = []
        for i, key in enumerate(cells):
            want, have = normalize(case.expected[key]), got.values[i]
            if want != have or split_sheet(key, "")[0] in got.missing_sheets:
                wrong.append((key, want, have, ""))
            elif case.expected_styles is not None and got.styles is not None:
                look, seen = tuple(case.expected_styles.get(key, ("000000",) * 3)), tuple(got.styles[i] or ())
                if look != seen:
                    wrong.append((key, want, have, f"fill/background/font colours {'/'.join(seen)}, expected "
                                                   f"{'/'.join(look)}"))  # fmt: skip
        note = got.note
        if got.missing_sheets:
            note = f"no sheet named {', '.join(repr(s) for s in got.missing_sheets)} in the output" + (
                f"; {note}" if note else "")  # fmt: skip
        out.append(CaseGrade(len(cells) - len(wrong), len(cells), wrong, note=note, formulas=got.formulas))
    return Grade(out, run.failure, run.isolation)


def _show(value: Any) -> str:
    return "(empty)" if value is None else repr(value) if isinstance(value, str) else f"{value:g}" if isinstance(
        value, float) else str(value)  # fmt: skip


def practice_message(grade: Grade, default_sheet: str = "") -> str:
    """What a practice attempt is told: per case, which target cells were wrong (the first few, expected vs got)."""
    if grade.failure:
        return f"The program failed on every case: {grade.failure}"
    lines = [f"Cell accuracy {grade.cell:.2f}; all cells of all {len(grade.cases)} cases right: "
             f"{'yes' if grade.hard else 'no'}."]  # fmt: skip
    for i, c in enumerate(grade.cases, start=1):
        if c.error:
            lines.append(f"Case {i}: {c.error}")
            continue
        head = f"Case {i}: {c.correct} of {c.total} target cells right"
        if c.note:
            head += f" ({c.note})"
        if not c.wrong:
            lines.append(head + ".")
            continue
        shown = []
        for key, want, have, colours in c.wrong[:SHOWN_PER_CASE]:
            sheet, cell = split_sheet(key, default_sheet)
            where = cell if sheet == default_sheet else key
            shown.append(f"{where} has {colours}" if colours else f"{where} expected {_show(want)}, got {_show(have)}")
        more = f" (and {len(c.wrong) - SHOWN_PER_CASE} more)" if len(c.wrong) > SHOWN_PER_CASE else ""
        lines.append(f"{head}; wrong: {'; '.join(shown)}{more}.")
    return "\n".join(lines)


def test_message(grade: Grade) -> str:
    """The test split is graded by the runner only: numbers, never expected values."""
    if grade.failure:
        return f"failed: {grade.failure[:200]}"
    return f"cell accuracy {grade.cell:.3f}; hard {'pass' if grade.hard else 'fail'}; " + ", ".join(
        f"case {i}: {c.correct}/{c.total}" for i, c in enumerate(grade.cases, start=1))  # fmt: skip


test_message.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
