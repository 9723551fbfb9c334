"""EvoTest's UCB (search.ucb): score + c·α^depth·sqrt(ln(max(2, N)) / (1 + children)), argmax, no draw."""

from __future__ import annotations

import math
import random

import pytest

from evoarena.search.archive import Scored
from evoarena.search.ucb import EvoTestUCB, depths, exploration, ucb_scores

# r ─┬─ a ── c
#    └─ b
TREE = (Scored("r", (0.5,)), Scored("a", (0.6,), "r"), Scored("b", (0.4,), "r"), Scored("c", (0.7,), "a"))


def test_the_formula_on_a_hand_computed_tree() -> None:
    # N = 4, ln 4 = 1.386294; sqrt(ln4/3) = 0.679778, sqrt(ln4/2) = 0.832555, sqrt(ln4) = 1.177410
    expected = [0.5 + 0.679778, 0.6 + 0.8 * 0.832555, 0.4 + 0.8 * 1.177410, 0.7 + 0.64 * 1.177410]
    assert ucb_scores(TREE) == pytest.approx(expected, abs=1e-6)
    assert EvoTestUCB().select(TREE, random.Random(0)).id == "c"


def test_depth_is_the_number_of_parent_links_to_the_root() -> None:
    assert depths(TREE) == {"r": 0, "a": 1, "b": 1, "c": 2}
    assert depths((Scored("c", (0,), "a"), Scored("a", (0,), "r"), Scored("r", (0,)))) == {"c": 2, "a": 1, "r": 0}
    assert depths((Scored("x", (0,), "gone"), Scored("y", (0,), "x"))) == {"x": 0, "y": 1}  # parent not archived
    with pytest.raises(ValueError, match="cycle"):
        depths((Scored("p", (0,), "q"), Scored("q", (0,), "p")))


def test_exploration_shrinks_with_depth_and_with_children() -> None:
    assert exploration(0, 0, 4) > exploration(1, 0, 4) > exploration(2, 0, 4)
    assert exploration(3, 0, 4) / exploration(2, 0, 4) == pytest.approx(0.8)
    assert exploration(0, 0, 4) > exploration(0, 1, 4) > exploration(0, 5, 4)
    assert exploration(0, 3, 4) == pytest.approx(exploration(0, 0, 4) / 2)  # sqrt(1 / (1 + 3))
    assert exploration(2, 1, 9, c=2.0, alpha=0.5) == pytest.approx(2 * 0.25 * math.sqrt(math.log(9) / 2))


def test_n_below_two_counts_as_two() -> None:
    assert exploration(0, 0, 0) == exploration(0, 0, 1) == exploration(0, 0, 2) == pytest.approx(math.sqrt(math.log(2)))
    assert exploration(0, 0, 3) > exploration(0, 0, 2)
    assert ucb_scores((Scored("only", (0.25,)),)) == pytest.approx([0.25 + math.sqrt(math.log(2))])


def test_n_may_be_given_explicitly() -> None:
    assert ucb_scores(TREE, total=4) == ucb_scores(TREE)
    assert ucb_scores(TREE, total=10)[3] == pytest.approx(0.7 + 0.64 * math.sqrt(math.log(10)))
    assert EvoTestUCB(total=10).select(TREE, random.Random(0)).id == "c"


def test_an_unexpanded_node_can_beat_a_better_but_crowded_one() -> None:
    arch = [Scored("r", (0.9,)), Scored("x", (0.5,), "r")] + [Scored(f"k{i}", (0.0,), "r") for i in range(8)]
    assert EvoTestUCB().select(arch, random.Random(0)).id == "x"  # r has 9 children
    assert EvoTestUCB(c=0.0).select(arch, random.Random(0)).id == "r"  # no exploration: greedy


def test_ties_go_to_the_earliest_and_nothing_is_drawn() -> None:
    rng = random.Random(11)
    state = rng.getstate()
    twins = (Scored("r", (0.0,)), Scored("p", (0.5,), "r"), Scored("q", (0.5,), "r"))
    assert EvoTestUCB().select(twins, rng).id == "p" and rng.getstate() == state
    with pytest.raises(ValueError):
        EvoTestUCB().select((), rng)


def test_select_among_keeps_the_whole_tree_for_depth_children_and_n() -> None:


    archive = (Scored("r", (0.5,)), Scored("x", (0.6,), "r"), Scored("y", (0.1,), "x"))
    rng = random.Random(0)
    assert EvoTestUCB().select_among(archive, archive[:2], rng).id == max(
        ("r", "x"), key=lambda i: dict(zip("rxy", ucb_scores(archive), strict=True))[i])
    with pytest.raises(ValueError, match="nothing eligible"):
        EvoTestUCB().select_among(archive, (), rng)
