"""EvoSkill against its released code (`sentient-agi/EvoSkill` @8d50384), as summarised in
/work/shared/reference/methods-as-released.md §6 (lines 81-89). Each test names the line it checks."""

from __future__ import annotations

from types import SimpleNamespace

from evoarena.methods.evoskill.method import IMPROVED, EvoSkill, HistoryEntry, Program, admit, best_of
from evoarena.methods.prompting import render_prompt


def prog(pid: str, score: float) -> Program:
    return Program(id=pid, parent=None, skills={}, score=score)


def test_released_defaults_frontier_3_failure_below_0_8_patience_5() -> None:
    """methods-as-released.md §6 l.83 ("frontier of top 3 programs by validation score"), l.85 ("sample fails if
    score < 0.8") and l.89 ("Stop after 5 without improvement")."""
    p = EvoSkill.Params()
    assert (p.frontier_size, p.failure_threshold, p.patience) == (3, 0.8, 5)


def test_the_parent_is_the_best_frontier_member() -> None:
    """methods-as-released.md §6 l.85: "parent = best frontier member" (ties: the earliest)."""
    assert best_of([prog("a", 0.4), prog("b", 0.7), prog("c", 0.7)]) == 1


def test_acceptance_is_against_the_worst_member_not_the_parent() -> None:
    """methods-as-released.md §6 l.88-89: "add if frontier < 3 or score > worst member (replace); else discard. NOT
    "only if better than parent"": a child worse than its parent (the best) still replaces the worst."""
    progs = [prog("parent", 0.9), prog("b", 0.2), prog("c", 0.3)]
    assert admit(progs, prog("child", 0.25), 3)
    assert [p.id for p in progs] == ["parent", "child", "c"]
    assert not admit(progs, prog("tie", 0.25), 3)


def test_improved_means_strictly_above_the_previous_best() -> None:
    """methods-as-released.md §6 l.84: outcomes IMPROVED / KEPT / DISCARDED with the score change; IMPROVED is a new
    best (a tie is not)."""
    assert IMPROVED.decide([0.5, 0.7], [0.71]).accepted
    assert not IMPROVED.decide([0.5, 0.7], [0.7]).accepted


def test_the_proposer_sees_skills_full_history_failure_traces_and_ground_truth() -> None:
    """methods-as-released.md §6 l.86-87: "Proposer sees existing skills, full feedback history, failure traces +
    ground truth → {action: create|edit, target_skill, proposed_skill, justification}"."""
    history = [HistoryEntry(action="create", target_skill=f"s{i}", proposed_skill=f"P{i}", justification="j",
                            outcome=o, score_change=0.1 * i, child=f"p{i}", parent="p0")
               for i, o in enumerate(("IMPROVED", "KEPT", "DISCARDED"), 1)]
    failure = SimpleNamespace(task="TASK-X", output="OUT-X", score=0.0, feedback="FB-X", ground_truth="GT-X")
    text = render_prompt("evoarena.methods.evoskill", "propose", skills=[SimpleNamespace(name="sk", body="BODY")],
                         history=history, failures=[failure])
    for part in ("BODY", "[IMPROVED, score change +0.100]", "[KEPT", "[DISCARDED", "TASK-X", "OUT-X", "FB-X",
                 "GT-X", '"action": "create" or "edit"', '"target_skill"', '"proposed_skill"', '"justification"'):
        assert part in text, part
