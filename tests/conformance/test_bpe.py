"""BPE (EvoHarness-RL's prompt-time harness) against its source, seed 004 as digested in seeds-digest-batch2.md §6
(lines 58-66; no released code). The parser, recall ranking, LFU eviction and cap are exercised in
tests/methods/test_bpe.py; here the numbers and names are tied to the digest. Each test names the line it checks."""

from __future__ import annotations

from pathlib import Path

import yaml

from evoarena.methods.bpe.agent import STATUSES, Config
from evoarena.methods.bpe.experience import STORES, TITLES, Bank
from evoarena.methods.bpe.goal import TYPES
from evoarena.methods.bpe.method import BPE

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "bpe-household.yaml"


def test_the_meta_actions_are_track_commit_recall_note() -> None:
    """seeds-digest-batch2.md §6 l.61: "A = A_env ∪ A_bpe, A_bpe = {track, commit, recall, note}"."""
    assert Config().meta_actions == ("track", "commit", "recall", "note")


def test_progress_holds_8_subgoals_tried_todo_or_blocked() -> None:
    """seeds-digest-batch2.md §6 l.60 ("subgoal-status records (g_i, σ_i) — tried / todo / blocked") and l.61
    ("`commit[subgoal]` writes Progress, cap 8")."""
    assert STATUSES == ("tried", "todo", "blocked")
    assert BPE.Params().progress_cap == 8 == Config().progress_cap


def test_four_stores_of_80_entries_recall_top_3_per_store() -> None:
    """seeds-digest-batch2.md §6 l.61: "`recall[query]` reads Experience: 4 stores (general / task-specific / common
    mistakes / object-location search priors), 80 entries each, keyword-overlap retrieval top-3 per store"."""
    assert len(STORES) == 4
    assert [TITLES[s] for s in STORES] == ["general", "task-specific", "common mistakes", "search priors"]
    p = BPE.Params()
    assert (p.store_cap, p.recall_k) == (80, 3) and Bank().cap == 80 and Config().recall_k == 3


def test_the_household_recipe_shares_t_max_70_over_the_six_alfworld_families() -> None:
    """seeds-digest-batch2.md §6 l.61 ("both share one step budget T_max = 70") and l.65 (families Pick / Look /
    Clean / Heat / Cool / Pick2)."""
    assert TYPES == ("pick", "look", "clean", "heat", "cool", "pick-two")
    bench = yaml.safe_load(RECIPE.read_text())["benchmark"]["params"]
    assert bench["max_steps"] == 70
    assert sorted(bench["tasks"]) == sorted(TYPES)
