"""HGM's selection (search.clade) and the tree helpers under it (search.lineage): clade pools own + descendants
without touching a node's own results, the Beta(1 + s, 1 + f) Thompson draw, the expandable filter, and the
expand-vs-evaluate rule n_evals^0.6 >= nodes - 1 + pending."""

from __future__ import annotations

import random

import pytest

from evoarena.search import Scored
from evoarena.search.clade import (
    CladeThompson,
    NodeThompson,
    NothingToExpand,
    expand_now,
    expandable,
    thompson,
    to_evaluate,
)
from evoarena.search.lineage import children_of, clade_results, depths

#   r ─ a ─ a1
#     │   └ a2
#     └ b
TREE = (Scored("r", (1, 0)), Scored("a", (0, 0, 0), "r"), Scored("b", (1, 1), "r"),
        Scored("a1", (1, 1, 1), "a"), Scored("a2", (1,), "a"))


def test_tree_helpers() -> None:
    assert children_of(TREE) == {"r": ["a", "b"], "a": ["a1", "a2"], "b": [], "a1": [], "a2": []}
    assert depths(TREE) == {"r": 0, "a": 1, "b": 1, "a1": 2, "a2": 2}
    pools = clade_results(TREE)
    assert pools["a"] == (0, 0, 0, 1, 1, 1, 1) and pools["b"] == (1, 1) and len(pools["r"]) == 11
    assert [c.scores for c in TREE] == [(1, 0), (0, 0, 0), (1, 1), (1, 1, 1), (1,)]  # own results untouched
    with pytest.raises(ValueError, match="cycle"):
        depths((Scored("x", (), "y"), Scored("y", (), "x")))


def test_expand_rule_is_hgms() -> None:
    assert expand_now(0, 1)  # 0 ** 0.6 = 0 >= 0: the first step grows the tree
    assert not expand_now(0, 1, pending=1)
    assert expand_now(10, 4) and not expand_now(10, 5)  # 10 ** 0.6 = 3.98
    assert expand_now(800, 56) and not expand_now(800, 57)  # 800 ** 0.6 = 55.2 >= 55 nodes beyond the root
    assert expand_now(32, 8, alpha=0.6) and not expand_now(32, 8, alpha=0.5)  # 32^.6 = 7.99.., 32^.5 = 5.7


def test_only_nodes_with_a_positive_mean_are_expandable() -> None:
    archive = (*TREE, Scored("new", (), "b"))
    assert [c.id for c in expandable(archive)] == ["r", "b", "a1", "a2"]  # "a" has mean 0, "new" no results
    with pytest.raises(NothingToExpand):
        CladeThompson().select((Scored("r", (0, 0)),), random.Random(0))


def test_thompson_draws_beta_one_plus_successes_one_plus_failures() -> None:
    rng, ref = random.Random(7), random.Random(7)
    results = [(1, 0, 0), (1, 1), ()]
    draws = [ref.betavariate(1 + 1, 1 + 2), ref.betavariate(1 + 2, 1 + 0), ref.betavariate(1, 1)]
    assert thompson(results, rng) == max(range(3), key=draws.__getitem__)


def test_clade_sampling_prefers_a_bad_node_with_good_descendants() -> None:
    # "a" is expandable here (one success) but its own mean is low; its clade (with a1, a2) is strong
    tree = (Scored("r", (1, 0, 0, 0)), Scored("a", (1, 0, 0, 0), "r"), Scored("b", (1, 1, 0, 0), "r"),
            Scored("a1", (1,) * 30, "a"), Scored("a2", (1,) * 30, "a"))
    parents = [c.id for c in tree]
    rng = random.Random(0)
    clade = [CladeThompson().select(tree, rng).id for _ in range(2000)]
    node = [NodeThompson().select(tree, rng).id for _ in range(2000)]
    # clade level: "a" carries its descendants' 60 successes (Beta(62, 4)); node level: its own 1 of 4 (Beta(2, 4))
    # never beats a1/a2's Beta(31, 1)
    assert clade.count("a") > 80 and node.count("a") == 0
    assert set(clade) <= set(parents)


def test_evaluation_picks_by_own_results_and_tries_the_unevaluated() -> None:
    rng = random.Random(3)
    archive = (Scored("good", (1,) * 9 + (0,)), Scored("bad", (0,) * 10), Scored("new", ()))
    picks = [to_evaluate(archive, rng).id for _ in range(1000)]
    assert picks.count("bad") < 20 and picks.count("new") > 50 and picks.count("good") > picks.count("new")


def test_the_greedy_baseline_and_the_posterior_mean() -> None:
    from evoarena.search.clade import PARENT_POLICIES, GreedyExpandable, posterior_mean

    rng = random.Random(0)
    state = rng.getstate()
    # b, a1 and a2 all have mean 1.0: the earliest in archive order wins, and nothing is drawn
    assert GreedyExpandable().select(TREE, rng).id == "b" and rng.getstate() == state
    with pytest.raises(NothingToExpand):
        GreedyExpandable().select((Scored("r", (0, 0)),), rng)
    assert sorted(PARENT_POLICIES) == ["clade", "dgm", "greedy", "node", "ucb"]
    assert posterior_mean([]) == 0.5 and posterior_mean([1.0, 1.0, 0.0]) == 0.6


def test_dgm_and_ucb_inside_hgms_loop_choose_among_expandable_nodes_scored_in_the_whole_tree() -> None:
    from evoarena.search.clade import PARENT_POLICIES
    from evoarena.search.ucb import ucb_scores

    rng = random.Random(0)
    # `a` (mean 0) is never expandable, so never chosen, though its UCB counts as in the whole tree
    for name in ("dgm", "ucb"):
        assert {PARENT_POLICIES[name].select(TREE, rng).id for _ in range(200)} <= {"r", "b", "a1", "a2"}
    whole = dict(zip([c.id for c in TREE], ucb_scores(TREE), strict=True))  # N = 5 nodes, children in the tree
    best = max(("r", "b", "a1", "a2"), key=lambda i: whole[i])
    assert PARENT_POLICIES["ucb"].select(TREE, rng).id == best
    with pytest.raises(NothingToExpand):
        PARENT_POLICIES["dgm"].select((Scored("r", (0, 0)),), rng)
