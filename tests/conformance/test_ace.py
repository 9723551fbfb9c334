"""ACE against its released code (`ace-agent/ace` @ba78d34), as summarised in
/work/shared/reference/methods-as-released.md §1 (lines 17-39). Each test names the line it checks."""

from __future__ import annotations

from evoarena.methods.ace.method import REFLECTION_KEYS, Ace, reflect_prompt
from evoarena.methods.ace.playbook import (
    SECTIONS,
    Bullet,
    Playbook,
    apply_operations,
    apply_tags,
    parse_playbook,
    render_playbook,
)


def test_the_empty_playbook_has_the_seven_released_sections_in_order() -> None:
    """methods-as-released.md §1 l.19-20: "Empty playbook has 7 sections: strategies & insights, formulas &
    calculations, code snippets & templates, common mistakes, problem-solving heuristics, context clues, others"."""
    assert SECTIONS == ("strategies & insights", "formulas & calculations", "code snippets & templates",
                        "common mistakes", "problem-solving heuristics", "context clues", "others")
    headers = [line for line in render_playbook(Playbook()).splitlines() if line.startswith("## ")]
    assert headers == [f"## {s.upper()}" for s in SECTIONS]


def test_a_bullet_is_one_line_with_a_five_digit_id_and_both_counters() -> None:
    """methods-as-released.md §1 l.18: "each bullet one line `[slug-00042] helpful=H harmful=K :: content`";
    l.20: "IDs from a global counter, 5 digits"."""
    bullet = Bullet("str", 42, 3, 1, "check units")
    assert bullet.line() == "[str-00042] helpful=3 harmful=1 :: check units"
    assert parse_playbook("## OTHERS\n" + bullet.line()).bullets()[0] == bullet


def test_released_defaults_three_rounds_curator_every_step_budget_80k() -> None:
    """methods-as-released.md §1 l.23 ("up to 3 rounds"), l.28 ("every `curator_frequency` (1) steps"), l.35
    ("Token budget (80k) is printed into the prompt, never enforced")."""
    p = Ace.Params()
    assert (p.max_reflector_rounds, p.curator_frequency, p.token_budget) == (3, 1, 80000)
    assert p.use_ground_truth is False  # l.24: "ground truth (optional)"


def test_only_add_is_applied_and_ids_come_from_one_counter() -> None:
    """methods-as-released.md §1 l.30-31: "Released code applies ONLY `ADD` (UPDATE/MERGE/DELETE are stubs);
    unknown sections go to "others"" and l.20 (one global counter)."""
    pb = Playbook()
    ops = [{"type": t, "section": "common mistakes", "content": "x"} for t in ("UPDATE", "MERGE", "DELETE")]
    ops += [{"type": "ADD", "section": "nowhere", "content": "a"}, {"type": "ADD", "section": "context clues",
                                                                    "content": "b"}]
    added, next_id = apply_operations(pb, ops, 7)
    assert [(b.id, b.content) for b in added] == [("oth-00007", "a"), ("con-00008", "b")]
    assert next_id == 9 and len(pb.bullets()) == 2


def test_tags_helpful_and_harmful_add_one_neutral_changes_nothing() -> None:
    """methods-as-released.md §1 l.25-26: "Counters update at once (helpful+1 / harmful+1 / neutral none)"."""
    pb = parse_playbook("## OTHERS\n[oth-00001] helpful=0 harmful=0 :: a\n[oth-00002] helpful=0 harmful=0 :: b")
    changed = apply_tags(pb, [{"id": "oth-00001", "tag": "helpful"}, {"id": "oth-00002", "tag": "harmful"},
                              {"id": "oth-00002", "tag": "neutral"}])
    assert changed == 2
    assert [(b.helpful, b.harmful) for b in pb.bullets()] == [(1, 0), (0, 1)]


def test_reflector_prompt_asks_for_the_released_keys_and_shows_only_cited_bullets() -> None:
    """methods-as-released.md §1 l.23-25: the Reflector sees question, full generator response, answer, ground
    truth (optional), feedback and only the cited bullets; outputs {reasoning, error_identification,
    root_cause_analysis, correct_approach, key_insight, bullet_tags}."""
    cited = Bullet("com", 3, 0, 0, "cited rule")
    text = reflect_prompt("Q?", "full response", "7", None, "wrong", [cited])
    for key in ("reasoning", *REFLECTION_KEYS, "bullet_tags"):
        assert f'"{key}"' in text
    assert REFLECTION_KEYS == ("error_identification", "root_cause_analysis", "correct_approach", "key_insight")
    assert cited.line() in text and "full response" in text and "Ground truth" not in text
    assert "Ground truth: 8" in reflect_prompt("Q?", "r", "7", "8", "wrong", [cited])


def test_curator_prompt_carries_budget_progress_stats_reflection_playbook_and_question() -> None:
    """methods-as-released.md §1 l.28-29: the Curator "sees token budget, step/total, playbook stats, the last
    reflection, the full playbook, the task context"; l.37-39: add only missing insights, never regenerate the
    playbook, pure JSON, empty ops if nothing new."""
    pb = parse_playbook("## OTHERS\n[oth-00001] helpful=0 harmful=0 :: keep me")
    text = Ace().curate_prompt(4, 10, pb, {"key_insight": "lesson"}, "What is 2+2?")
    for part in ("Token budget: 80000", "step 4 of 10", '"total_bullets": 1', "lesson", "keep me",
                 "What is 2+2?", "Do not regenerate the playbook", "pure JSON", "empty operations list"):
        assert part in text, part
