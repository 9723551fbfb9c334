"""Training-Free GRPO against its released code (TencentCloudADP/youtu-agent, branch training_free_GRPO @7612f86;
main @bef6ba5), as summarised in /work/shared/reference/methods-as-released.md §4 (lines 66-73). Each test names the
line it checks."""

from __future__ import annotations

import json

from evoarena.methods.prompting import render_prompt
from evoarena.methods.tf_grpo.method import (
    CRITIQUE_OPS,
    UPDATE_OPS,
    TfGrpo,
    apply_ops,
    check_op,
    dump_library,
    read_library,
    render_library,
)

PKG = "evoarena.methods.tf_grpo"


def test_released_defaults_group_of_5_at_temperature_0_7_and_32_words() -> None:
    """methods-as-released.md §4 l.73 ("Defaults vary: G = 5, temperature 0.7"), l.71 ("<= 32 words per
    experience") and l.69 (the original math code is the default update)."""
    p = TfGrpo.Params()
    assert (p.group_size, p.temperature, p.max_words, p.variant) == (5, 0.7, 32, "original")


def test_the_library_is_renumbered_g0_to_gn_and_shown_as_bracketed_lines() -> None:
    """methods-as-released.md §4 l.67: "dict {id: text}, renumbered G0..Gn-1 after each step; injected as
    "[G3]. text" lines"."""
    exps = apply_ops(["a", "b", "c"], [check_op({"option": "merge", "experience": "ac", "merged_from": ["G0", "G2"]},
                                                UPDATE_OPS["original"], 3, 32)[0]])  # type: ignore[list-item]
    assert json.loads(dump_library(exps)) == {"G0": "b", "G1": "ac"}
    assert read_library({"memory/experiences.json": dump_library(exps)}) == ["b", "ac"]
    assert render_library(exps) == "[G0]. b\n[G1]. ac"


def test_critique_proposes_add_or_modify_and_the_update_adds_merge() -> None:
    """methods-as-released.md §4 l.70-71: the group critique returns "{add} / {modify, modified_from}, max 1 op per
    group"; the batch update returns "modify or merge (merged_from >= 2 ids)"; l.72: "No delete in that code.
    `main` branch adds ADD/UPDATE/DELETE/NONE"."""
    assert CRITIQUE_OPS == ("add", "modify")
    assert UPDATE_OPS["original"] == ("add", "modify", "merge")
    assert set(UPDATE_OPS["main"]) == {"add", "modify", "merge", "delete", "none"}
    assert check_op({"option": "delete", "delete_id": "G0"}, UPDATE_OPS["original"], 1, 32)[0] is None
    assert check_op({"option": "merge", "experience": "x", "merged_from": ["G0"]}, UPDATE_OPS["original"], 2,
                    32)[0] is None
    text = render_prompt(PKG, "critique", question="Q", experiences="(empty)", summaries="S", max_words=32)
    assert "exactly one operation" in text and "modified_from" in text


def test_an_experience_over_32_words_is_refused() -> None:
    """methods-as-released.md §4 l.71: "<= 32 words per experience, strategic not specific"."""
    op = {"option": "add", "experience": " ".join(["w"] * 33)}
    assert check_op(op, CRITIQUE_OPS, 0, TfGrpo.Params().max_words)[0] is None
    assert check_op({**op, "experience": " ".join(["w"] * 32)}, CRITIQUE_OPS, 0, 32)[0] is not None
    assert "at most 32 words" in render_prompt(PKG, "update", experiences="", proposed="{}", main=False,
                                               max_words=32)


def test_on_main_a_delete_overrides_other_operations_on_its_id() -> None:
    """methods-as-released.md §4 l.72: "`main` branch adds ADD/UPDATE/DELETE/NONE with DELETE overriding"."""
    allowed = UPDATE_OPS["main"]
    ops = [check_op({"option": "modify", "experience": "new", "modified_from": "G1"}, allowed, 2, 32)[0],
           check_op({"option": "delete", "delete_id": "G1"}, allowed, 2, 32)[0]]
    assert apply_ops(["a", "b"], ops) == ["a"]  # type: ignore[arg-type]


def test_the_summary_prompt_names_used_experiences_detours_and_outcome() -> None:
    """methods-as-released.md §4 l.69-70: "per-rollout step summary (which experience used, detours/errors,
    outcome)"."""
    text = render_prompt(PKG, "summarize", question="Q", experiences="[G0]. e", output="O", reward=1.0,
                         feedback="ok")
    assert "which experiences it used (by id)" in text and "detours or errors" in text and "the outcome" in text
