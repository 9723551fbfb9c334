"""`arith-student` on the quickstart's families (evidence: mechanism): the reference prompt's wording of the two-step
and counting rules is a lesson it learns from, and as Dynamic Cheatsheet's curator it writes a sheet that the method's
own check adopts and that teaches the solver."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evoarena.api.context import Reply
from evoarena.benchmarks.arith.benchmark import ArithBenchmark
from evoarena.methods.dynamic_cheatsheet.method import EMPTY, PROBE_SHEET, Pair, check_sheet, parse_sheet
from evoarena.methods.prompting import render_prompt
from evoarena.models import GenParams, Message
from evoarena.scripted.arith import RULES, arith_student, naive_answer, solve_correctly

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "quickstart.yaml"
DC = "evoarena.methods.dynamic_cheatsheet"
TWO_STEP = "Ann has 7 shells, finds 5 more, and then loses 3. How many shells does Ann have?"
COUNT = "How many times does the word 'red' appear in: red, cat, red, sun?"


def _ask(prompt: str, system: str = "") -> str:
    return arith_student([*([Message("system", system)] if system else []), Message("user", prompt)], GenParams())


def _reference_system() -> str:
    methods = yaml.safe_load(RECIPE.read_text("utf-8"))["methods"]
    refs = [m for m in methods if m["name"] == "reference"]
    if not refs:
        pytest.skip("the quickstart has no reference condition")
    return str(refs[0]["params"]["system"])


@pytest.mark.parametrize("question", [TWO_STEP, COUNT])
def test_the_reference_prompt_teaches_what_the_default_prompt_does_not(question: str) -> None:
    default = ArithBenchmark(reply="worked").system_prompt()
    assert solve_correctly(question) != naive_answer(question)
    assert _ask(f"Q: {question}\nA:", default).strip() == str(naive_answer(question))
    assert _ask(f"Q: {question}\nA:", _reference_system()).strip() == str(solve_correctly(question))


def test_the_cumulative_curator_adds_the_problems_rule_once_and_keeps_the_old_sheet() -> None:
    first = _ask(render_prompt(DC, "curate_cumulative", question=TWO_STEP, output=" 15", sheet=EMPTY))
    sheet, _ = parse_sheet(first)
    assert sheet == f"- {RULES['two_step']}"
    assert check_sheet(EMPTY, "curate_cumulative", Reply(first)).usable
    again = _ask(render_prompt(DC, "curate_cumulative", question=TWO_STEP, output=" 15", sheet=sheet))
    assert parse_sheet(again)[0] == sheet  # the rule is there already: nothing added
    grown = _ask(render_prompt(DC, "curate_cumulative", question=COUNT, output=" 4", sheet=PROBE_SHEET))
    assert parse_sheet(grown)[0] == f"{PROBE_SHEET}\n- {RULES['count']}"
    assert check_sheet(PROBE_SHEET, "curate_cumulative", Reply(grown)).usable


def test_the_retrieval_curator_writes_the_next_problems_rule_and_the_solver_learns_from_it() -> None:
    reply = _ask(render_prompt(DC, "curate_rs", sheet=EMPTY, pairs=[Pair(TWO_STEP, " 15")], question=COUNT))
    sheet, _ = parse_sheet(reply)
    assert sheet == f"- {RULES['count']}"
    context = render_prompt(DC, "context", sheet=sheet)
    assert _ask(f"{context}\n\nQ: {COUNT}\nA:").strip() == str(solve_correctly(COUNT))
