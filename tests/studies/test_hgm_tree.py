"""HGM's synthetic-tree study (evoarena.studies.hgm_tree): the tree is fixed per seed whatever the arm does, a
deceptive branch's head is worse than its parent while its descendants drift up, and the 30-seed study's numbers
(docs/findings.md) are what they were."""

from __future__ import annotations

import json
import statistics

import pytest
from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.studies.hgm_tree import ARMS, TreeSpec, _child, _Node, search, study


def test_the_tree_is_the_same_for_every_arm_and_every_order() -> None:
    root = _Node("0", None, 0.4, 0.4, 0.0)
    first = _child(root, 2, seed=5, spec=TreeSpec())
    again = _child(root, 2, seed=5, spec=TreeSpec())
    assert (first.id, first.true_p, first.base) == (again.id, again.true_p, again.base) == ("0.2", again.true_p,
                                                                                              again.base)
    assert _child(root, 2, seed=6, spec=TreeSpec()).true_p != first.true_p
    assert search("clade-ts", 3) == search("clade-ts", 3)


def test_deceptive_heads_start_low_and_their_branches_climb() -> None:
    spec = TreeSpec(deceptive_share=1.0, sigma=0.0)
    head = _child(_Node("0", None, 0.4, 0.4, 0.0), 0, seed=0, spec=spec)
    assert head.true_p == pytest.approx(0.4 + 0.05 - 0.15) and head.drift == 0.05
    grandchild = _child(head, 0, seed=0, spec=spec)
    assert grandchild.true_p == pytest.approx(0.5) and grandchild.true_p > head.true_p
    plain = _child(_Node("0", None, 0.4, 0.4, 0.0), 0, seed=0, spec=TreeSpec(deceptive_share=0.0, sigma=0.0))
    assert plain.true_p == pytest.approx(0.38)


def test_a_search_spends_its_budget_and_grows_the_tree_by_the_expand_rule() -> None:
    out = search("node-ts", 0, TreeSpec(budget=100))
    assert out.nodes == 17  # 100 ** 0.6 = 15.8: 16 expansions beyond the root
    assert 0.0 < out.picked <= out.best <= 0.99
    with pytest.raises(ValueError, match="unknown arm"):
        search("thompson", 0)


def test_clade_thompson_beats_greedy_on_the_seeds_study() -> None:
    rows = {r.arm: r for r in study(30)}
    assert [r for r in rows] == list(ARMS)
    got = {arm: (round(r.picked_mean, 3), round(r.regret_mean, 3)) for arm, r in rows.items()}
    assert got == {"greedy": (0.71, 0.033), "node-ts": (0.762, 0.044), "clade-ts": (0.811, 0.021),
                   "dgm": (0.72, 0.061), "evotest-ucb": (0.823, 0.031)}
    assert rows["clade-ts"].vs_greedy_ci[0] > 0  # the paired CI of clade-ts - greedy excludes 0
    assert rows["node-ts"].vs_greedy_ci[0] < 0 < rows["node-ts"].vs_greedy_ci[1]
    assert rows["evotest-ucb"].vs_greedy_ci[0] > 0 and rows["dgm"].vs_greedy_ci[0] < 0


def test_the_command_line_prints_the_study_as_json() -> None:
    result = CliRunner().invoke(app, ["study", "hgm-tree", "--seeds", "3", "--budget", "60", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [a["arm"] for a in data["arms"]] == list(ARMS) and data["spec"]["budget"] == 60
    assert statistics.fmean(search("greedy", s, TreeSpec(budget=60)).picked for s in range(3)) == pytest.approx(
        data["arms"][0]["picked_mean"])
