"""Reflexion against its released code (`noahshinn/reflexion` @218cf0e), as summarised in
/work/shared/reference/methods-as-released.md §5 (lines 75-79) and the HotpotQA agent detailed in
docs/methods/reflexion.md § Source. Each test names the line it checks."""

from __future__ import annotations

from evoarena.methods.prompting import render_prompt
from evoarena.methods.reflexion.method import Reflexion, clean_reflection, read_reflections, reflect_prompt


def test_the_reflector_reply_cap_is_the_released_250_tokens() -> None:
    """Released `hotpotqa_runs/agents.py`: the reflect LLM runs with 250 max tokens (docs/methods/reflexion.md §
    Source; methods-as-released.md §5 l.76 names the reflect LLM)."""
    assert Reflexion.Params().max_tokens == 250


def test_the_reflection_prompt_asks_for_a_diagnosis_and_a_new_concise_high_level_plan() -> None:
    """methods-as-released.md §5 l.77: the reflect LLM sees the question and the scratchpad → "diagnose failure +
    new concise high-level plan"; no reference answer is shown (the released scratchpad ends "Answer is INCORRECT")."""
    text = reflect_prompt("What is 6*7?", "  41  ", "The answer 41 is wrong.")
    assert "diagnose a possible reason for the failure" in text
    assert "new, concise, high-level plan" in text
    assert "Question: What is 6*7?" in text and "Your output: 41" in text
    assert "Feedback: The answer 41 is wrong." in text
    assert "42" not in text


def test_a_reflection_is_collapsed_to_one_line_and_injected_as_a_dash_bullet_under_a_header() -> None:
    """methods-as-released.md §5 l.78: reflections are "injected as "- " bullets under a header" (the released agent
    strips newlines from each)."""
    text, _ = clean_reflection("Check the sign.\nThen recompute\n  the sum.", 600)
    assert text == "Check the sign. Then recompute the sum."
    tree = {"memory/reflections.md": f"- {text}\n- second lesson\n"}
    assert read_reflections(tree) == [text, "second lesson"]
    shown = render_prompt("evoarena.methods.reflexion", "context", reflections=read_reflections(tree))
    assert [line for line in shown.splitlines() if line] == [
        "Lessons from earlier attempts (use them if relevant):", f"- {text}", "- second lesson"]


def test_memory_is_bounded_like_the_paper_omega() -> None:
    """methods-as-released.md §5 l.78-79: ALFWorld keeps "the last <= 3 plans per environment" (the paper's bounded
    Ω); ours keeps the newest `max_reflections` (5), a bound across tasks (docs/methods/reflexion.md § Deliberate
    differences)."""
    p = Reflexion.Params()
    assert p.max_reflections == 5 and p.max_trials == 2
