"""`sheets`: seeded spreadsheet-manipulation tasks in the spirit of SpreadsheetBench (or its released files,
with `source`), answered by a Python program that the sandbox runs on three input workbooks."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from evoarena.api import Benchmark, Feedback, Params, Parsed, ProbeExample, Split, Task, TaskView, benchmark
from evoarena.benchmarks.sheets.core import Case, Sheets, SheetTask, split_sheet, target_cells
from evoarena.benchmarks.sheets.execution import LIMITS, run_program
from evoarena.benchmarks.sheets.families import DEFAULT_FAMILIES, FAMILIES
from evoarena.benchmarks.sheets.generate import draw_task, generate_tasks
from evoarena.benchmarks.sheets.grading import Grade, grade_run, practice_message, test_message
from evoarena.benchmarks.sheets.layout import read_sheets, workbook_bytes
from evoarena.benchmarks.sheets.loader import load_item, load_source
from evoarena.benchmarks.sheets.probe_examples import PROBE_EXAMPLES
from evoarena.benchmarks.sheets.tasks import task_text
from evoarena.models.base import GenParams
from evoarena.sandbox import SandboxLimits

_CODE = re.compile(r"```(?:python|py|Python)?[ \t]*\n(.*?)```", re.S)


class SheetsParams(Params):
    """The sheets benchmark's params."""

    seed: int = Field(0, description="Seeds every draw; a task depends only on (seed, split, index, family).")
    tasks: int | None = Field(default=None, ge=1, description="Tasks in all (generated: 44 by default; source: all "
                                                              "items).")
    ratio: tuple[int, int, int] = Field((2, 1, 8), strict=False, description="Train : val : test, as in the seed; "
                                        "sizes are rounded and test takes the rest.")
    families: list[str] = Field(default_factory=lambda: list(DEFAULT_FAMILIES),
                                description="The families, cycled in this order across train, then "
                                            "val, then test.")
    source: str | None = Field(None, description="A SpreadsheetBench folder (`dataset.json` + `spreadsheet/`) to "
                                                 "load instead of generating.")
    preview_rows: int = Field(default=6, ge=1, description="Rows shown per sheet in the task text.")
    wall_s: float = Field(default=LIMITS.wall_s, gt=0, description="Wall-clock limit for one program run on all "
                                                                   "cases; the CPU limit is 2/3 of it.")

    @field_validator("families")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(FAMILIES))
        if unknown or not value:
            raise ValueError(f"unknown {unknown} (known: {list(FAMILIES)})" if unknown else "at least one family")
        return value


@benchmark("sheets")
class SheetsBenchmark(Benchmark):
    """Spreadsheet tasks in the spirit of SpreadsheetBench: a solve(input_path, output_path) program run in the sandbox.

    Score = cell accuracy (mean over the 3 cases of the fraction of target cells right); passed = hard (every
    target cell of every case right). Practice feedback names wrong cells; the test split gets numbers only."""

    class Params(SheetsParams):
        """`SheetsParams`, as the benchmark's declared params."""

    params: Params

    @classmethod
    def probe_examples(cls) -> tuple[ProbeExample, ...]:
        """A sequential scan and a running total, each with a wrong program and its wrong cells (probe_examples.py)."""
        return PROBE_EXAMPLES

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        # Train and val tasks only: the benchmark is reachable from a method's context, so it keeps nothing of the
        # test split; a test task is redrawn (or reread) from its id when graded and checked against its digest.
        self._tasks: dict[str, SheetTask] = {}
        self._grades: dict[tuple[str, str], Grade] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ tasks

    def sheet_tasks(self) -> list[tuple[Split, SheetTask]]:
        c = self.params
        if c.source:
            return load_source(Path(c.source), seed=c.seed, total=c.tasks, ratio=c.ratio)
        return generate_tasks(c.seed, c.tasks or 44, c.families, c.ratio)

    def generate(self) -> list[Task]:
        out = []
        for split, st in self.sheet_tasks():
            if split != "test":
                self._tasks[st.id] = st
            prompt = task_text(st, self._preview(st.cases[0]), self.params.preview_rows)
            reference = st.reference_program or json.dumps(
                {"expected_case_1": {k: _jsonable(v) for k, v in st.cases[0].expected.items()}}, ensure_ascii=False
            )
            meta = {"family": st.family, "target": st.target, "instruction_type": st.instruction_type,
                    "source_id": st.source_id, "expected_sha256": _digest(st)}  # fmt: skip
            out.append(Task(st.id, split, st.id, prompt, reference, meta))
        return out

    def _preview(self, case: Case) -> Sheets:
        if case.input_sheets is not None:
            return case.input_sheets
        assert case.input_xlsx is not None
        return read_sheets(case.input_xlsx)

    def sheet_task(self, task: Task) -> SheetTask:
        """The full task behind a Task: kept for train/val, redrawn or reread for test (and checked)."""
        if task.split != "test":
            if task.id not in self._tasks:
                with self._lock:
                    self._tasks.update((st.id, st) for split, st in self.sheet_tasks() if split != "test")
            return self._tasks[task.id]
        c = self.params
        source_id = str(task.meta["source_id"])
        if c.source:
            st = load_item(Path(c.source), source_id, task.id)
        else:
            st = draw_task(c.seed, "test", int(source_id), str(task.meta["family"]))
        if _digest(st) != task.meta["expected_sha256"]:
            raise RuntimeError(f"test task {task.id}: its redrawn cases differ from the ones handed out")
        return st

    @staticmethod
    def input_xlsx(case: Case) -> bytes:
        if case.input_xlsx is not None:
            return case.input_xlsx
        assert case.input_sheets is not None
        return workbook_bytes(case.input_sheets)

    # ------------------------------------------------------------------ answers

    def parse(self, text: str) -> Parsed:
        blocks = [b for b in _CODE.findall(text) if "def solve" in b]
        if not blocks:
            return Parsed(None, "no ```python block defining solve(input_path, output_path)")
        return Parsed(blocks[-1])

    def run(self, st: SheetTask, program: str, *, remember: bool = True) -> Grade:
        """Run and grade a program on every case of a task (memoised unless `remember` is off: repeated practice
        attempts reuse it)."""
        key = (st.id, hashlib.sha256(program.encode("utf-8")).hexdigest())
        with self._lock:
            cached = self._grades.get(key)
        if cached is not None:
            return cached
        inputs = [(self.input_xlsx(c), [split_sheet(k, "") for k in c.expected]) for c in st.cases]
        limits = SandboxLimits(wall_s=self.params.wall_s, cpu_s=max(int(self.params.wall_s * 2 / 3), 1),
                               memory_mb=LIMITS.memory_mb, output_bytes=LIMITS.output_bytes)  # fmt: skip
        styles = any(c.expected_styles is not None for c in st.cases)
        grade = grade_run(st, run_program(program, inputs, styles=styles, limits=limits))
        if remember and not (grade.failure or "").startswith("timed out"):  # a timeout may be the machine's load
            with self._lock:
                self._grades[key] = grade
        return grade

    def grade(self, task: Task, answer: str | None, *, attempt: int = 1) -> Feedback:
        if answer is None:
            return Feedback(0.0, False, "No ```python block defining solve(input_path, output_path) was found.")
        st = self.sheet_task(task)
        grade = self.run(st, answer, remember=task.split != "test")
        if task.split == "test":
            return Feedback(grade.cell, grade.hard, test_message(grade))
        default = target_cells(st.target, "")[0][0] if st.target else ""
        return Feedback(grade.cell, grade.hard, practice_message(grade, default))

    def diagnose(self, task: Task, answer: str | None, state: str = "") -> dict[str, Any] | None:
        """Hard, cell and soft (fraction of cases entirely right) of a test answer, per case too."""
        if task.split != "test":
            return None
        st = self.sheet_task(task)
        if answer is None:
            return {"family": st.family, "hard": False, "cell": 0.0, "soft": 0.0, "cases": [], "failure": "no program"}
        return {"family": st.family, **self.run(st, answer, remember=False).summary()}

    # ------------------------------------------------------------------ harness

    def system_prompt(self) -> str:
        return (
            "You are a spreadsheet expert who manipulates Excel workbooks with Python and openpyxl. For each task, "
            "reply with one ```python code block that defines solve(input_path, output_path).\n"
        )

    def solver_params(self) -> GenParams:
        return GenParams(temperature=0.0, max_tokens=2048)

    def format_task(self, task: TaskView) -> str:
        return task.prompt

    def info(self) -> dict[str, Any]:
        c = self.params
        return {
            **super().info(),
            "source": c.source or "generated",
            "families": [] if c.source else list(c.families),
            "ratio": list(c.ratio),
            "score": "cell accuracy: mean over cases of the fraction of target cells right",
            "passed": "hard: every target cell of every case right",
        }


def _jsonable(value: Any) -> Any:
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def _digest(st: SheetTask) -> str:
    """A hash of the expected values of every case (Task.payload_hash does not cover meta)."""
    blob = json.dumps([[[k, _jsonable(v)] for k, v in c.expected.items()] for c in st.cases], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
