"""The scripted HGM proposer (evidence: mechanism): the diagnosis names the failed arith question's family rule in
HGM's JSON (hgm/prompts/diagnose.md), the improvement appends the requested change in one ``` block
(hgm/prompts/improve.md); no failure, or a rule the harness already holds, gives a reply HGM rejects."""

from __future__ import annotations

from evoarena.methods.hgm import method as hgm_method
from evoarena.methods.jsonparse import first_json, whole_and_fenced
from evoarena.methods.prompting import render_prompt
from evoarena.methods.replies import parse_instruction
from evoarena.models import GenParams, Message
from evoarena.scripted.arith import RULES, arith_student
from evoarena.scripted.labels_learner import cue_line, labels_learner

PKG = hgm_method.__package__


def _ask(prompt: str) -> str:
    return arith_student([Message("user", prompt)], GenParams())


def test_the_diagnosis_names_the_failed_familys_rule() -> None:
    prompt = render_prompt(PKG, "diagnose", harness="Answer.", task="Sam had 9 apples and gave away 4. How many?",
                           output="13", feedback="expected 5")
    found = first_json(whole_and_fenced(_ask(prompt)), dict)
    assert found is not None and found["problem_description"] == RULES["sub"]


def test_a_node_with_no_failure_gets_no_json() -> None:
    prompt = render_prompt(PKG, "diagnose", harness="Answer.", task="(no failed task recorded yet)", output="",
                           feedback="")
    assert first_json(whole_and_fenced(_ask(prompt)), dict) is None


def test_the_improvement_appends_the_change_and_repeats_a_harness_that_holds_it() -> None:
    text, _ = parse_instruction(_ask(render_prompt(PKG, "improve", harness="Answer.", problem=RULES["mul"])),
                                "strict")
    assert text is not None and text.strip() == f"Answer.\n{RULES['mul']}"
    again, _ = parse_instruction(_ask(render_prompt(PKG, "improve", harness=text, problem=RULES["mul"])), "strict")
    assert again is not None and again.strip() == text.strip()  # HGM rejects it: the rewrite repeats its parent


def test_the_labels_learner_writes_the_expected_labels_cue_line() -> None:
    """The line is in the form `labels-student` reads (`Label: cue, cue`); words under 4 letters and label names are
    left out; feedback that names no expected label (test feedback) gives no lesson."""
    task = "Ticket: My Billing invoice was charged twice\nLabels: Billing, Refund"
    assert cue_line(task, "Wrong label Billing. The expected label is Refund.") == "Refund: invoice, charged, twice"
    assert cue_line(task, "Wrong label Billing.") is None
    prompt = render_prompt(PKG, "diagnose", harness="Classify.", task=task, output="Billing",
                           feedback="Wrong label Billing. The expected label is Refund.")
    found = first_json(whole_and_fenced(labels_learner([Message("user", prompt)], GenParams())), dict)
    assert found is not None and found["problem_description"] == "Refund: invoice, charged, twice"
