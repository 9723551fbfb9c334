"""JitRL's step memory and retrieval: the released tokeniser, n-grams and multiset Jaccard; the 0.3/0.7 similarity;
the threshold falling with the step; all hits above 0.98 kept past k; the rest filling to k; the paper-style top-k;
the released return chain (LLM score else env reward, −10 on a failed last step, the zero-substitution quirk)."""

from __future__ import annotations

from collections import Counter

import pytest

from evoarena.methods.jitrl.step_memory import (
    RetrievalConfig,
    StepKey,
    StepMemory,
    multiset_jaccard,
    ngrams,
    released_returns,
    released_step_signals,
    tokenize,
)

QUERY = StepKey("you are in the library near a shelf of old books", "a b c d e f g h i j")


def test_tokenize_keeps_only_alphanumeric_tokens_like_the_released_code() -> None:
    assert tokenize("Open the DOOR.\nTake lamp 2 now") == ["open", "the", "take", "lamp", "2", "now"]
    assert tokenize("") == []


def test_ngrams_and_the_short_text_fallback() -> None:
    assert ngrams(["a", "b", "c"], 2) == ["a b", "b c"]
    assert ngrams(["a", "b"], 4) == ["a", "b"]  # shorter than n: the tokens themselves
    with pytest.raises(ValueError):
        ngrams(["a"], 0)


def test_multiset_jaccard_counts_repeats() -> None:
    assert multiset_jaccard(Counter("xxy"), Counter("xyy")) == pytest.approx(2 / 4)
    assert multiset_jaccard(Counter("ab"), Counter("ab")) == 1.0
    assert multiset_jaccard(Counter(), Counter("ab")) == 0.0


def _row_keys() -> dict[str, StepKey]:
    """History variants of QUERY with known similarities (state identical, so sim = 0.7 + 0.3·J(history))."""
    return {
        "same": QUERY,                                                      # 1.0
        "plus_one": StepKey(QUERY.state, QUERY.history + " k"),             # J = 10/11 → 0.97273
        "swap_one": StepKey(QUERY.state, "a b c d e f g h i z"),            # J = 9/11 → 0.94545
        "other": StepKey("a dark cave with water", QUERY.history),          # state J = 0 → 0.3
    }


def test_similarity_is_0_3_history_unigrams_plus_0_7_state_4grams() -> None:
    memory = StepMemory()
    keys = _row_keys()
    memory.add_returns(list(keys.values()), list(keys), [0.0] * len(keys))
    sims = {n.row.action: n.similarity for n in memory.score(QUERY, RetrievalConfig.released_jericho())}
    assert sims == pytest.approx({"same": 1.0, "plus_one": 0.7 + 0.3 * 10 / 11, "swap_one": 0.7 + 0.3 * 9 / 11,
                                  "other": 0.3})
    paper = {n.row.action: n.similarity for n in memory.score(QUERY, RetrievalConfig.paper_jericho())}
    assert paper["plus_one"] == pytest.approx(0.75 + 0.25 * 10 / 11)


def test_the_threshold_falls_with_the_step() -> None:
    memory = StepMemory()
    keys = _row_keys()
    memory.add_returns(list(keys.values()), list(keys), [0.0] * len(keys))
    config = RetrievalConfig.released_jericho()
    assert [n.row.action for n in memory.retrieve(QUERY, config, step=0)] == ["same", "plus_one"]  # ≥ 0.95
    assert [n.row.action for n in memory.retrieve(QUERY, config, step=20)] == ["same", "plus_one", "swap_one"]


def test_every_hit_above_0_98_is_kept_past_k_and_others_only_fill_to_k() -> None:
    memory = StepMemory()
    memory.add_returns([QUERY] * 12, [f"same{i}" for i in range(12)], [float(i) for i in range(12)])
    memory.add_returns([_row_keys()["plus_one"]] * 3, ["near0", "near1", "near2"], [0.0, 5.0, 1.0])
    got = memory.retrieve(QUERY, RetrievalConfig.released_jericho(), step=0)
    assert len(got) == 12 and all(n.similarity > 0.98 for n in got)  # 12 > k = 10, all kept, no filler
    # sorted by similarity, then by return (highest first)
    assert [n.row.ret for n in got] == sorted((float(i) for i in range(12)), reverse=True)

    small = StepMemory()
    small.add_returns([QUERY] * 3, ["s0", "s1", "s2"], [0.0, 0.0, 0.0])
    small.add_returns([_row_keys()["plus_one"]] * 9, [f"n{i}" for i in range(9)], [float(i) for i in range(9)])
    got = small.retrieve(QUERY, RetrievalConfig.released_jericho(), step=0)
    assert len(got) == 10
    assert [n.row.action for n in got[:3]] == ["s0", "s1", "s2"]
    assert [n.row.action for n in got[3:]] == [f"n{i}" for i in (8, 7, 6, 5, 4, 3, 2)]  # best returns fill


def test_paper_option_keeps_the_k_best_above_a_fixed_threshold() -> None:
    memory = StepMemory()
    memory.add_returns([QUERY] * 12, [f"same{i}" for i in range(12)], [0.0] * 12)
    memory.add_returns([_row_keys()["swap_one"]], ["swap"], [9.0])  # 0.75 + 0.25·9/11 = 0.9545 ≥ 0.95
    config = RetrievalConfig.paper_jericho()
    assert len(memory.retrieve(QUERY, config, step=0)) == 10
    assert all(n.row.action != "swap" for n in memory.retrieve(QUERY, config, step=0))
    wider = RetrievalConfig(mode="paper", k=20, history_weight=0.25, state_weight=0.75)
    assert [n.row.action for n in memory.retrieve(QUERY, wider)][-1] == "swap"


def test_an_empty_memory_retrieves_nothing() -> None:
    assert StepMemory().retrieve(QUERY) == []
    assert StepMemory().retrieve(StepKey(""), RetrievalConfig.paper_jericho(), step=99) == []


def test_episodes_are_counted_and_rows_remember_where_they_came_from() -> None:
    memory = StepMemory(gamma=0.5)
    memory.add_episode([StepKey("a"), StepKey("b")], [" go north ", "open door"], [0.0, 1.0])
    memory.add_episode([StepKey("c")], ["look"], [2.0])
    assert memory.episodes == 2 and len(memory) == 3
    assert [(r.episode, r.step, r.action, r.ret) for r in memory.rows] == [
        (0, 0, "go north", 0.5), (0, 1, "open door", 1.0), (1, 0, "look", 2.0)]
    with pytest.raises(ValueError):
        memory.add_episode([StepKey("a")], ["x", "y"], [0.0])


def test_released_step_signals_and_the_failed_last_step() -> None:
    assert released_step_signals([3, 0, 0], [0, 5, 0], success=True) == [3.0, 5.0, 0.0]
    assert released_step_signals([3, 0, 0], [0, 5, 0], success=False) == [3.0, 5.0, -10.0]
    assert released_step_signals([3, 0, 4], [0, 5, 0], success=False) == [3.0, 5.0, 4.0]  # LLM score wins


def test_released_returns_reproduce_the_zero_substitution_quirk() -> None:
    # signals (2, 0, 0); step 0 discounts its zeros as its own LLM score 2: 2 + 0.5·2 + 0.25·2 = 3.5;
    # step 1 (own score 0): 0; the paper's formula would give 2 for step 0
    assert released_returns([2, 0, 0], [0, 0, 0], 0.5, success=True) == pytest.approx([3.5, 0.0, 0.0])
    assert released_returns([2, 0, 0], [0, 0, 0], 0.5, success=False) == pytest.approx([2 + 0.5 * 2 - 2.5, -5.0,
                                                                                         -10.0])
