"""Dynamic Cheatsheet against its released code (`suzgunmirac/dynamic-cheatsheet` @1cf258c), as summarised in
/work/shared/reference/methods-as-released.md §2 (lines 41-53). Each test names the line it checks."""

from __future__ import annotations

from evoarena.methods.dynamic_cheatsheet.method import (
    EMPTY,
    DynamicCheatsheet,
    Pair,
    parse_sheet,
    read_sheet,
)
from evoarena.methods.prompting import render_prompt

PKG = "evoarena.methods.dynamic_cheatsheet"


def test_released_defaults_top_k_3_max_tokens_2048_cumulative() -> None:
    """methods-as-released.md §2 l.50: "Defaults: temperature 0, max_tokens 2048, top_k 3"; l.46 DC-Cumulative is
    the plain variant, l.48 DC-RS the retrieval one."""
    p = DynamicCheatsheet.Params()
    assert (p.variant, p.top_k, p.max_tokens) == ("cumulative", 3, 2048)


def test_the_sheet_starts_as_empty_and_the_solver_sees_it() -> None:
    """methods-as-released.md §2 l.42: "State: one cheatsheet string, starts "(empty)""."""
    assert EMPTY == "(empty)"
    assert read_sheet({}) == "(empty)"
    assert "(empty)" in DynamicCheatsheet().context({}, None)  # type: ignore[arg-type]


def test_the_curator_writes_a_full_replacement_inside_the_tag_and_a_missing_tag_keeps_the_old() -> None:
    """methods-as-released.md §2 l.47: the Curator "writes a FULL REPLACEMENT sheet (text inside `<cheatsheet>`;
    if tag missing keep old)"."""
    assert parse_sheet("x <cheatsheet>one</cheatsheet> y <cheatsheet>two</cheatsheet>") == ("two", "")
    assert parse_sheet("a sheet without its tag")[0] is None


def test_cumulative_curator_sees_question_output_previous_sheet_and_no_ground_truth() -> None:
    """methods-as-released.md §2 l.46-47 (Curator sees question, full generator output — no ground truth —,
    previous sheet) and l.51-53 (judge correctness first; keep, merge, dedupe; usage counts; anything not copied
    over is lost; ~2000-2500 words)."""
    text = render_prompt(PKG, "curate_cumulative", question="Q-17", output="OUT-17", sheet="OLD-SHEET")
    assert all(part in text for part in ("Q-17", "OUT-17", "OLD-SHEET"))
    assert text.index("Q-17") < text.index("OUT-17") < text.index("OLD-SHEET")
    for rule in ("First judge", "no answer key", "remove duplicates", "Count: N", "REPLACES the old one",
                 "anything you do not copy over is lost", "2000 words"):
        assert rule in text, rule


def test_rs_curator_sees_old_sheet_retrieved_pairs_then_the_next_input() -> None:
    """methods-as-released.md §2 l.48-49: DC-RS retrieves earlier (input, output) pairs "(no correctness filter);
    Curator runs BEFORE generation on old sheet + retrieved pairs + next input"."""
    pairs = [Pair("IN-1", "OUT-1"), Pair("IN-2", "OUT-2")]
    text = render_prompt(PKG, "curate_rs", sheet="OLD", pairs=pairs, question="NEXT")
    order = [text.index(s) for s in ("OLD", "IN-1", "OUT-1", "IN-2", "OUT-2", "NEXT")]
    assert order == sorted(order)
    assert "may be wrong" in text and "no answer key" in text
