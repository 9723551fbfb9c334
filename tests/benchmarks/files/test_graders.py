"""The `files` graders: what each reads out of an output, and the cases where a grader could be wrong (tolerance edges,
letters against texts, punctuation, numbers inside numbers)."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import Feedback
from evoarena.benchmarks.files import FilesBenchmark
from evoarena.benchmarks.files.graders import (
    GraderError,
    choice_list,
    first_number,
    make_grader,
    normalize,
    region,
)


def grade(grader: str, output: str, reference: str, row: dict[str, Any] | None = None, **options: Any) -> Feedback:
    """Parse `output` as the benchmark would and score it against `reference`."""
    g = make_grader(grader, {**FilesBenchmark.defaults, **options}, given=list(options),
                    parse=str(options.get("parse", "")))
    parsed = g.parse(output)
    if parsed.answer is None:
        return Feedback(0.0, False, g.missing)
    return g.score(parsed.answer, reference, row or {})


def passes(grader: str, output: str, reference: str, row: dict[str, Any] | None = None, **options: Any) -> bool:
    return grade(grader, output, reference, row, **options).passed


# --- the answer region -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "mode", "expected"), [
    ("Let me think.\nAnswer: 42", "answer", "42"),
    ("Answer: 41\nNo wait.\nFinal answer: 42", "answer", "42"),
    ("ANSWER:   Paris  \nbecause it is the capital", "answer", "Paris"),
    ("The answer:\n\n  Paris\n", "answer", "Paris"),
    ("**Answer:** `42`", "answer", "42"),
    ("I reckon\nParis", "answer", "Paris"),
    ("42\nQ: next question", "first_line", "42"),
    ("a\nb\n\n", "last_line", "b"),
    ("  whole\noutput  ", "full", "whole\noutput"),
    ("   \n  ", "answer", None),
    ("", "full", None),
])
def test_the_answer_region(text: str, mode: str, expected: str | None) -> None:
    assert region(text, mode) == expected


def test_an_unknown_parse_mode_is_refused() -> None:
    with pytest.raises(GraderError, match=r"benchmark\.params\.parse: 'middle' is not one of answer, last_line"):
        make_grader("exact", FilesBenchmark.defaults, parse="middle")


# --- exact, normalized ----------------------------------------------------------------------------------------------


def test_exact_is_exact_after_stripping() -> None:
    assert passes("exact", "Answer:  Paris ", "Paris")
    assert not passes("exact", "Answer: Paris.", "Paris")
    assert not passes("exact", "Answer: paris", "Paris")
    assert passes("exact", "Answer: paris", "Paris", ignore_case=True)


def test_exact_feedback_names_the_answer_not_the_reference() -> None:
    fb = grade("exact", "Answer: Lyon", "Paris")
    assert fb == Feedback(0.0, False, "The answer 'Lyon' does not match the reference exactly.")
    assert "Paris" not in fb.message


@pytest.mark.parametrize(("a", "b", "same"), [
    ("The  Beatles!", "beatles", True),
    ("New-York", "new york", True),
    ("don't", "dont", False),  # the apostrophe becomes a space, as punctuation does
    ("3.5", "35", False),  # a point between digits is kept
    ("1,000", "1000", False),
    ("Ça va?", "ça va", True),
    ("A cat", "cat", True),
])
def test_normalize(a: str, b: str, same: bool) -> None:
    assert (normalize(a) == normalize(b)) is same


def test_normalized_grader_with_and_without_articles() -> None:
    assert passes("normalized", "Answer: The Paris!", "paris")
    assert passes("normalized", "Answer:  NEW   york.", "New York")
    assert not passes("normalized", "Answer: The Hague", "Hague", drop_articles=False)
    assert passes("normalized", "Answer: the hague", "The Hague", drop_articles=False)
    assert not passes("normalized", "Answer: Lyon", "Paris")


# --- numeric ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "value", "percent"), [
    ("about 42 apples", Fraction(42), False),
    ("1,234.5 dollars", Fraction("1234.5"), False),
    ("1,234,567", Fraction(1234567), False),
    ("12,34", Fraction(12), False),  # not a thousands group: the number ends at the comma
    ("-3 degrees", Fraction(-3), False),
    ("\u22127", Fraction(-7), False),
    ("2.5e3", Fraction(2500), False),
    ("3/4 of it", Fraction(3, 4), False),
    ("45%", Fraction(45), True),
    ("50 %", Fraction(50), True),
    (".5", Fraction(1, 2), False),
    ("$1,000", Fraction(1000), False),
    ("3 + 4 = 7", Fraction(3), False),  # the first number: ask for `Answer:` to avoid this
])
def test_first_number(text: str, value: Fraction, percent: bool) -> None:
    n = first_number(text)
    assert n is not None and (n.value, n.percent) == (value, percent)


def test_first_number_none() -> None:
    assert first_number("no digits here") is None
    assert first_number("- . %") is None


def test_numeric_reads_the_first_number_of_the_answer() -> None:
    assert passes("numeric", "Step 1: 3 + 4 = 7.\nAnswer: 7", "7")
    assert passes("numeric", "Answer: 7 apples (from 3 and 4)", "7")
    assert passes("numeric", "Answer: 2,500", "2500")
    assert passes("numeric", "Answer: 2500.0", "2,500")
    assert not passes("numeric", "Answer: 25,00", "2500")
    fb = grade("numeric", "Answer: none", "7")
    assert fb == Feedback(0.0, False, "No number was found in the answer.")


@pytest.mark.parametrize(("answer", "reference", "tolerance", "rel", "ok"), [
    ("10.5", "10", 0.5, 0.0, True),  # exactly on the absolute edge
    ("9.5", "10", 0.5, 0.0, True),
    ("10.51", "10", 0.5, 0.0, False),
    ("1.1", "1.0", 0.1, 0.0, True),  # 1.1 - 1.0 > 0.1 in binary floating point; exact here
    ("0.3", "0.1", 0.2, 0.0, True),
    ("110", "100", 0.0, 0.1, True),  # exactly on the relative edge
    ("110.01", "100", 0.0, 0.1, False),
    ("-110", "-100", 0.0, 0.1, True),  # relative to |reference|
    ("0.001", "0", 0.0, 0.5, False),  # a relative tolerance of 0 is 0
    ("0.001", "0", 0.001, 0.5, True),  # either tolerance passes
    ("7.0000", "7", 0.0, 0.0, True),
    ("7.0001", "7", 0.0, 0.0, False),
])
def test_numeric_tolerance_edges(answer: str, reference: str, tolerance: float, rel: float, ok: bool) -> None:
    assert passes("numeric", f"Answer: {answer}", reference, tolerance=tolerance, rel_tolerance=rel) is ok


@pytest.mark.parametrize(("answer", "reference", "ok"), [
    ("50%", "0.5", True),
    ("0.5", "50%", True),
    ("50", "50%", True),
    ("50%", "50", True),
    ("50%", "50%", True),
    ("5%", "0.5", False),
    ("0.5%", "0.5", True),  # the bare values agree; a `%` on one side only also tries it as a fraction
])
def test_numeric_percent(answer: str, reference: str, ok: bool) -> None:
    assert passes("numeric", f"Answer: {answer}", reference) is ok


def test_numeric_feedback_says_the_tolerance_not_the_reference() -> None:
    fb = grade("numeric", "Answer: 12", "10", tolerance=0.5, rel_tolerance=0.01)
    assert fb.message == "The answer 12 is not the expected value (tolerance: absolute 0.5, relative 0.01)."


# --- regex -----------------------------------------------------------------------------------------------------------


def test_regex_reference_must_match_the_whole_answer() -> None:
    assert passes("regex", "Answer: 2024-01-05", r"\d{4}-\d{2}-\d{2}")
    assert not passes("regex", "Answer: on 2024-01-05", r"\d{4}-\d{2}-\d{2}")
    assert not passes("regex", "Answer: YES", "yes|y")
    assert passes("regex", "Answer: YES", "yes|y", ignore_case=True)


def test_regex_pattern_extracts_the_answer() -> None:
    assert passes("regex", "I looked it up. The code is ID-42, I think.", "42", pattern=r"ID-(\d+)")
    assert not passes("regex", "The code is ID-43.", "42", pattern=r"ID-(\d+)")
    assert passes("regex", "verdict: TRUE", "true", pattern=r"(?:TRUE|FALSE)", ignore_case=True)
    fb = grade("regex", "no code", "42", pattern=r"ID-(\d+)")
    assert fb == Feedback(0.0, False, "The output did not match the answer pattern.")


def test_regex_bad_pattern_and_reference_are_one_line() -> None:
    with pytest.raises(GraderError, match=r"benchmark\.params\.pattern: not a valid regular expression"):
        make_grader("regex", {**FilesBenchmark.defaults, "pattern": "("}, given=["pattern"])
    g = make_grader("regex", FilesBenchmark.defaults)
    assert "not a valid regular expression" in str(g.check_reference("a(", {}))
    assert g.check_reference("a+", {}) is None


# --- contains --------------------------------------------------------------------------------------------------------


def test_contains_a_word_not_a_piece_of_one() -> None:
    assert passes("contains", "I count 4 apples.\nSo that's it.", "4")
    assert not passes("contains", "I count 14 apples.", "4")
    assert not passes("contains", "Parisian food", "Paris")
    assert passes("contains", "It is Paris, France.", "Paris, France")
    assert not passes("contains", "it is paris", "Paris")
    assert passes("contains", "it is paris", "Paris", ignore_case=True)
    assert passes("contains", "costs $5!", "$5")  # a reference that starts with a symbol has no left boundary


# --- choice ----------------------------------------------------------------------------------------------------------

ROW = {"choices": ["London", "Paris", "Rome", "The Hague"]}


@pytest.mark.parametrize(("output", "reference", "ok"), [
    ("B", "B", True),
    ("b", "B", True),
    ("(B)", "B", True),
    ("Answer: B) Paris", "B", True),
    ("B. Paris", "Paris", True),  # a letter answer, a text reference
    ("Paris", "B", True),  # a text answer, a letter reference
    ("paris.", "Paris", True),
    ("Answer: The Hague", "D", True),
    ("Hague", "D", True),  # articles dropped
    ("I think the answer is C", "C", True),
    ("The answer is Rome.", "C", True),
    ("Option C", "Rome", True),
    ("A", "B", False),
    ("London", "Paris", False),
    ("A or B", "B", False),  # two letters: no choice
    ("E", "B", False),  # four options: there is no E
])
def test_choice_letters_and_texts(output: str, reference: str, ok: bool) -> None:
    assert passes("choice", f"Answer: {output}" if not output.startswith("Answer") else output, reference, ROW) is ok


def test_choice_feedback() -> None:
    wrong = grade("choice", "Answer: A", "B", ROW)
    assert wrong.message == "The answer picks A (London), which is not the correct choice."
    assert grade("choice", "Answer: maybe", "B", ROW).message == (
        "No choice was found in the answer 'maybe' (a letter A–D or a choice's text).")


def test_choice_without_a_choices_column() -> None:
    assert passes("choice", "Answer: (c)", "C")
    assert not passes("choice", "Answer: D", "C")
    assert passes("choice", "Answer: the Paris", "Paris")  # texts compared normalised
    assert not passes("choice", "Answer: B", "Paris")  # no options to map the letter to a text


def test_choice_references_are_checked_against_the_options() -> None:
    g = make_grader("choice", FilesBenchmark.defaults)
    assert g.check_reference("B", ROW) is None
    assert g.check_reference("paris", ROW) is None
    assert g.check_reference("Berlin", ROW) == "answer 'Berlin' is neither a letter A–D nor one of the choices"
    assert g.check_reference("E", ROW) is not None


@pytest.mark.parametrize(("value", "expected"), [
    (["a", "b"], ["a", "b"]),
    ('["a", "b"]', ["a", "b"]),
    ("a | b|c", ["a", "b", "c"]),
    ("a\nb", ["a", "b"]),
    ("", []),
    (None, []),
])
def test_choice_list(value: Any, expected: list[str]) -> None:
    assert choice_list(value) == expected


def test_choice_column_is_a_param() -> None:
    row = {"options_col": "red|green|blue"}
    assert passes("choice", "Answer: green", "B", row, choices="options_col")


# --- module:function -------------------------------------------------------------------------------------------------


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Write `name.py` into a fresh current directory; returns a writer."""
    monkeypatch.chdir(tmp_path)
    written: list[str] = []

    def write(name: str, source: str) -> str:
        (tmp_path / f"{name}.py").write_text(source)
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


def test_function_grader_returns(user_module: Any) -> None:
    user_module("g_returns", "def yes(o, r, row):\n    return o == r\n\n"
                              "def half(o, r, row):\n    return 0.5\n\n"
                              "def row_aware(o, r, row):\n    return (1.0, f\"unit {row['unit']}\") if o == r else 0\n")
    assert grade("g_returns:yes", "x", "x") == Feedback(1.0, True, "Correct.")
    assert grade("g_returns:yes", "x", "y") == Feedback(0.0, False, "Score 0.00.")
    assert grade("g_returns:half", "x", "y") == Feedback(0.5, False, "Score 0.50.")
    assert grade("g_returns:half", "x", "y", pass_threshold=0.5).passed
    assert grade("g_returns:row_aware", "  x  ", "x", {"unit": "cm"}) == Feedback(1.0, True, "unit cm")


def test_function_grader_gets_the_whole_output_by_default(user_module: Any) -> None:
    user_module("g_whole", "def lines(o, r, row):\n    return (1.0, str(len(o.splitlines())))\n")
    assert grade("g_whole:lines", "a\nb\nAnswer: c", "c").message == "3"
    assert grade("g_whole:lines", "a\nb\nAnswer: c", "c", parse="answer").message == "1"


def test_function_grader_errors_are_one_line(user_module: Any) -> None:
    user_module("g_bad", "def big(o, r, row):\n    return 1.5\n\ndef boom(o, r, row):\n    return {}['x']\n\n"
                          "def tup(o, r, row):\n    return (1.0, 2)\n\nNOT_CALLABLE = 3\n")
    with pytest.raises(GraderError, match=r"grader g_bad:big: returned score 1\.5 \(expected a number in \[0, 1\]\)"):
        grade("g_bad:big", "x", "x")
    with pytest.raises(GraderError, match=r"grader g_bad:boom: raised KeyError: 'x'"):
        grade("g_bad:boom", "x", "x")
    with pytest.raises(GraderError, match=r"returned \(1\.0, 2\) \(expected a score or \(score, message\)\)"):
        grade("g_bad:tup", "x", "x")
    with pytest.raises(GraderError, match=r"'g_bad:NOT_CALLABLE' is not callable"):
        make_grader("g_bad:NOT_CALLABLE", FilesBenchmark.defaults)
    with pytest.raises(GraderError, match=r"g_bad has no missing"):
        make_grader("g_bad:missing", FilesBenchmark.defaults)
    with pytest.raises(GraderError, match=r"cannot import no_such_module_here .*current directory"):
        make_grader("no_such_module_here:f", FilesBenchmark.defaults)


# --- choosing a grader -----------------------------------------------------------------------------------------------


def test_unknown_grader_suggests_the_closest() -> None:
    with pytest.raises(GraderError, match=r"unknown grader 'numerc' — did you mean 'numeric'\? \(known: exact, "):
        make_grader("numerc", FilesBenchmark.defaults)


def test_an_option_of_another_grader_is_refused() -> None:
    with pytest.raises(GraderError, match=r"benchmark\.params\.tolerance: applies to the numeric grader, not 'exact'"):
        make_grader("exact", FilesBenchmark.defaults, given=["tolerance"])
    with pytest.raises(GraderError, match=r"ignore_case: applies to the exact and regex and contains graders"):
        make_grader("numeric", FilesBenchmark.defaults, given=["ignore_case"])
    make_grader("numeric", FilesBenchmark.defaults, given=["tolerance", "parse", "reveal", "path"])


@pytest.mark.parametrize("name", ["exact", "normalized", "numeric", "regex", "contains", "choice"])
def test_every_builtin_score_is_in_the_unit_interval(name: str) -> None:
    for output in ("", "Answer: 1", "Answer: B", "Answer: Paris", "x" * 300):
        fb = grade(name, output, "1" if name != "choice" else "B", ROW)
        assert 0.0 <= fb.score <= 1.0 and fb.passed is (fb.score == 1.0) and fb.message
