"""The CLR section of report.html (drawn by the registered ClrView) from a hand-made views.clr: captions, escaping,
and the fallbacks."""

from __future__ import annotations

from typing import Any

from report_samples import make_budgets, make_calls, make_meta, make_scores

from evoarena.benchmarks.clr.report_view import ClrView
from evoarena.report import build_results, render_html

VIEWS = {"clr": ClrView()}


def _condition(inc_u: float, exc: float) -> dict[str, Any]:
    shares = {"n": 4, "revealed_member_share": 0.5, "names_class_share": 0.25, "full_class_name_share": 0.125}
    return {
        "layer_accuracy": {"1": 0.8, "2": 0.6},
        "single_cell_accuracy": {"hits": 0, "n": 3, "rate": 0.0},
        "inc_u": {"rate": inc_u, "n": 6},
        "exc": {"rate": exc, "n": 9},
        "states": shares,
        "states_by_layer": {"1": {**shares, "n": 2}, "2": {**shares, "n": 2}},
    }


def _views() -> dict[str, Any]:
    tokens = {"tokens": 1500.0, "input_tokens": None, "output_tokens": None, "update_tokens": None}
    gate = {"method": "evoskill", "chains": 2, "chains_without_state_change": 1, "practice_layers": 4,
            "practice_layers_passed": 3, "tf_grpo": None,
            "evoskill": {"chains_accepting_nothing": 1, "source": "final states", "iterations": 3,
                         "iterations_in_states": 3, "outcomes": {"DISCARDED": 2, "IMPROVED": 1}, "discarded": 2,
                         "skips": {"no failures": 1}, "proposals": 4, "malformed_proposals": 1,
                         "states_without_skill": {"hits": 2, "n": 4, "rate": 0.5}}}
    grpo = {**gate, "method": "tf_grpo", "evoskill": None,
            "tf_grpo": {"groups": 6, "no_mixed_groups": 6, "no_mixed_all_failed": 6, "no_mixed_all_passed": 0,
                        "updates": 0, "capped_groups": 0, "chains_without_mixed_group": None,
                        "states_empty": {"hits": 4, "n": 4, "rate": 1.0}}}
    return {
        "frozen_ladder": {"1": 0.8, "2": 0.6, "3": 0.4, "4": 0.2},
        "conditions": {"<b>x</b>": _condition(0.1, 0.9), "x-lesson": _condition(0.5, 0.8)},
        "plot": None,
        "compare": {
            "pairs": [{"self": "<b>x</b>", "lesson": "x-lesson", "note": "clr:lesson", "source": "labels",
                       "inc_u": {"self": 0.1, "lesson": 0.5, "delta": 0.4},
                       "exc": {"self": 0.9, "lesson": 0.8, "delta": -0.1}}],
            "scatter": None,
            "tokens": {"<b>x</b>": {"chains": 2, "layers": {"1": tokens}, "per_chain": tokens,
                                    "ledger_aligned": False, "unattributed_calls": 3}},
            "tokens_plot": None,
            "gates": {"evo": gate, "grpo": grpo},
        },
    }


def test_clr_section_renders_every_table_with_the_evidence_label() -> None:
    results = build_results(make_meta("scaled"), make_scores(), make_calls(), make_budgets())
    page = render_html(results.model_copy(update={"views": {"clr": _views()}}), VIEWS)
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert page.count('<caption class="lm">evidence: scaled</caption>') == 7
    assert "1,500 (in+out)" in page  # the ledger could not be aligned: the meter's total, no split
    assert "12.5% (n=4)" in page  # states with the full class name
    assert "40.0%" in page and "-10.0%" in page  # the self -> lesson deltas
    assert "condition labels" in page and "DISCARDED 2, IMPROVED 1" in page and "1 / 2" in page


def test_a_run_without_compare_views_still_renders() -> None:
    results = build_results(make_meta(), make_scores(), make_calls(), make_budgets())
    views = _views()
    del views["compare"]
    page = render_html(results.model_copy(update={"views": {"clr": views}}), VIEWS)
    assert 'id="clr-layers"' in page and 'id="clr-pairs"' not in page
