"""`sheets-student`: right on every family but the sequential scan, which it gets right once its prompt states
the rule; as reflector it states that rule; and a frozen/reflexion run shows the difference (mechanism)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from evoarena.benchmarks.sheets.core import SheetTask
from evoarena.benchmarks.sheets.families import DEFAULT_FAMILIES
from evoarena.benchmarks.sheets.generate import draw_task
from evoarena.benchmarks.sheets.grading import Grade, practice_message
from evoarena.benchmarks.sheets.tasks import task_text
from evoarena.models import GenParams, Message
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.sheets.student import RULE, sheets_student
from evoarena.spec import parse_spec
from evoarena.store import RunStore

RunLocal = Callable[[str, SheetTask], Grade]
SYSTEM = Message("system", "You are a spreadsheet expert.")


def _prompt(task: SheetTask) -> str:
    return task_text(task, task.cases[0].input_sheets or {}, 6)


def _program(reply: str) -> str:
    return reply.split("```python\n", 1)[1].rsplit("```", 1)[0]


@pytest.mark.parametrize("family", [f for f in DEFAULT_FAMILIES if f != "seq_scan"])
def test_student_solves_the_other_families(family: str, run_local: RunLocal) -> None:
    task = draw_task(5, "test", 1, family)
    reply = sheets_student([SYSTEM, Message("user", _prompt(task))], GenParams())
    assert run_local(_program(reply), task).hard


def test_student_never_moves_the_reference_until_its_prompt_says_so(run_local: RunLocal) -> None:
    task = draw_task(5, "train", 0, "seq_scan")
    naive = run_local(_program(sheets_student([SYSTEM, Message("user", _prompt(task))], GenParams())), task)
    assert not naive.hard and 0.0 < naive.cell < 1.0
    assert all(c.wrong for c in naive.cases)  # the generator makes the mistake visible in every case
    lesson = Message("user", f"Lessons from earlier attempts:\n- {RULE}\n\n{_prompt(task)}")
    assert run_local(_program(sheets_student([SYSTEM, lesson], GenParams())), task).hard
    # as reflector, shown the failed attempt's feedback, it states the rule
    reflect = (f"Question: {_prompt(task)}\nYour output: ...\nFeedback: {practice_message(naive, 'x')}\n\n"
               "Reflection:")  # fmt: skip
    assert sheets_student([Message("user", reflect)], GenParams()) == RULE


def test_unknown_instructions_get_a_copying_program() -> None:
    text = "## Spreadsheet task\n\n### Instruction\nDo something else.\n\n### Target range\nA1\n\n" \
           "Reply with one ```python code block."  # fmt: skip
    assert "copyfile" in sheets_student([Message("user", text)], GenParams())


def test_reflexion_learns_the_scan_rule_and_frozen_does_not(tmp_path: Path) -> None:
    spec = parse_spec({
        "name": "sheets-mech",
        "benchmark": {"name": "sheets", "params": {"tasks": 4, "families": ["seq_scan"]}},
        "methods": [{"name": "frozen"}, {"name": "reflexion", "params": {"max_trials": 2}}],
        "models": {"s": {"backend": "scripted", "model": "sheets-student", "max_retries": 0}},
        "roles": {"solver": "s", "reflector": "s"},
        "protocol": {"workers": 2},
    })  # fmt: skip
    results = run_experiment(spec, tmp_path / "run")
    assert results["evidence"] == "mechanism"
    acc = {c["condition"]: c["test"]["mean"] for c in results["conditions"]}
    assert acc["reflexion"] == 1.0 and 0.0 < acc["frozen"] < 1.0
    hard = {r["cell"].split("__")[0]: r["hard"] for r in RunStore(tmp_path / "run").query(
        "SELECT cell, AVG(passed) AS hard FROM attempts WHERE phase='test' GROUP BY cell")}  # fmt: skip
    assert hard == {"frozen": 0.0, "reflexion": 1.0}
