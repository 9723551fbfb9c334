"""`sheets-student` in SkillProx's roles (evidence: mechanism): the program edits it relies on exist, the harmful
rules lower the score, the patcher turns from the wrong rule to the right one when momentum or a rejection says so,
and every shrink it proposes is legal and strictly shorter."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from evoarena.benchmarks.sheets.core import SheetTask
from evoarena.benchmarks.sheets.generate import draw_task
from evoarena.benchmarks.sheets.grading import Grade
from evoarena.benchmarks.sheets.tasks import task_text
from evoarena.methods.prompting import render_prompt
from evoarena.methods.skillprox.method import INITIAL_SKILL
from evoarena.methods.skillprox.patch import Patch, parse_patch
from evoarena.methods.skillprox.prox import ProxStep, overlaps
from evoarena.methods.skillprox.skill import render, struct_problems, units
from evoarena.models import GenParams, Message
from evoarena.scripted.sheets import skills as sp
from evoarena.scripted.sheets.student import LESSON, MISTAKE, sheets_student, student_program

# the method packages whose prompt templates these tests render
SKILLPROX = "evoarena.methods.skillprox"

RunLocal = Callable[[str, SheetTask], Grade]


def _prompt(task: SheetTask) -> str:
    return task_text(task, task.cases[0].input_sheets or {}, 6)


def _reset_task() -> SheetTask:
    return next(t for i in range(20) if (t := draw_task(0, "train", i, "running_total")).params["reset"] == "1")


def test_the_program_edits_match_the_rendered_programs() -> None:
    assert sp.SCAN_UPDATE == MISTAKE
    scan = draw_task(0, "train", 0, "seq_scan").reference_program
    assert sp.SCAN_UPDATE in scan and sp.SCAN_HIT in scan
    assert sp.RESET_ON in _reset_task().reference_program


def test_the_harmful_rules_lower_the_score(run_local: RunLocal) -> None:
    scan = draw_task(0, "train", 0, "seq_scan")
    naive = run_local(student_program(_prompt(scan), "") or "", scan)
    wrong = run_local(student_program(_prompt(scan), sp.WRONG_SCAN) or "", scan)
    good = run_local(student_program(_prompt(scan), sp.GOOD_SCAN) or "", scan)
    assert good.hard and not naive.hard and wrong.cell < naive.cell
    rt = _reset_task()
    assert run_local(student_program(_prompt(rt), "") or "", rt).hard
    assert not run_local(student_program(_prompt(rt), sp.RUNNING_TEXT) or "", rt).hard


def _diagnosis_prompt(task: SheetTask) -> str:
    traj = {"id": "train-000", "prompt": _prompt(task), "output": "...", "feedback": "Case 1: 9 of 16 right",
            "passed": False, "score": "0.500"}
    return render_prompt(SKILLPROX, "diagnose", skill=render(INITIAL_SKILL), task=traj, others=[], history=[],
                         feedback="")


def _momentum(patterns: list[str], diagnoses: list[dict[str, Any]], feedback: str = "") -> dict[str, Any]:
    prompt = render_prompt(SKILLPROX, "momentum", patterns=patterns, diagnoses=diagnoses, feedback=feedback,
                           max_patterns=12)
    reply: dict[str, Any] = json.loads(sheets_student([Message("user", prompt)], GenParams()))
    return reply


def _patch(patterns: list[str], diagnoses: list[dict[str, Any]], feedback: str = "") -> Patch:
    prompt = render_prompt(SKILLPROX, "patch", skill=render(INITIAL_SKILL), diagnoses=diagnoses, patterns=patterns,
                           overlay="", history=[], feedback=feedback)
    parsed = parse_patch(sheets_student([Message("user", prompt)], GenParams()), INITIAL_SKILL)
    assert isinstance(parsed, Patch) and not struct_problems(parsed.skill)
    return parsed


def test_momentum_sharpens_and_the_patcher_turns_right() -> None:
    d = json.loads(sheets_student([Message("user", _diagnosis_prompt(draw_task(0, "train", 0, "seq_scan")))],
                                  GenParams()))
    assert d["diagnosis"].startswith(sp.SHALLOW)
    diagnoses = [{"task": "train-000", "passed": False, "score": "0.500", **d}]
    first = _momentum([], diagnoses)
    assert first["patterns"] == [f"{sp.SHALLOW} (seen 1 time)."]
    assert sp.WRONG_MARK in _patch(first["patterns"], diagnoses).skill["SKILL.md"]
    told = _momentum(first["patterns"], diagnoses, f"Candidate 1 {sp.REJECTED}: cell dropped.")
    assert sp.SHARP in told["patterns"]
    third = _momentum([f"{sp.SHALLOW} (seen 2 times)."], diagnoses)
    assert third["patterns"] == [f"{sp.SHALLOW} (seen 3 times).", sp.SHARP]
    good = _patch(third["patterns"], diagnoses).skill
    assert LESSON in good["SKILL.md"] and sp.RUNNING_MARK in good["SKILL.md"] and sp.EXAMPLE_PATH in good


def test_every_shrink_is_legal_and_the_last_one_loses_the_rule() -> None:
    diagnoses = [{"task": "train-000", "passed": False, "score": "0.5", "diagnosis": sp.SHALLOW, "skill_change": "x"}]
    current = _patch([sp.SHARP], diagnoses).skill
    order = ["L2:Running values", "L2:Checks", f"L3:{sp.EXAMPLE_PATH}", f"L2:{sp.SCAN}"]
    actions = []
    for uid in order:
        present = {u.uid: u for u in units(current)}
        target = present[uid]
        prompt = render_prompt(SKILLPROX, "shrink", skill=render(current), target=target, u_cell="-0.0100",
                               u_hard="+0.0000", overlaps=overlaps(target, list(present.values()))[:3], H="1.000",
                               C="1.000", delta_h=1.0, delta_c=1.0)
        parsed = parse_patch(sheets_student([Message("user", prompt)], GenParams()), current,
                             extra=("action", "receiver"))
        assert isinstance(parsed, Patch), parsed
        assert ProxStep._problems(current, parsed, uid) == "", uid
        actions.append(parsed.extra["action"])
        current = parsed.skill
    assert actions == ["delete", "merge", "merge", "merge"]
    assert list(current) == ["SKILL.md"] and LESSON not in current["SKILL.md"]
    assert "compare each value with the reference value" in current["SKILL.md"]  # the merged gist


def test_other_prompts_are_left_to_the_student() -> None:
    assert sp.skillprox_reply("Question: 2 + 2\nReflection:") is None
