"""`evoarena versions`' tree (report.lineage_tree): branches drawn under their first parent in the order made,
per-phase scores of the attempts made with each version, a clade's val mean only where there are descendants."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.protocol.run.runner import run_experiment
from evoarena.report.lineage_tree import node_stats, render
from evoarena.store.versions import VersionRow


def _v(vid: str, parents: list[str], step: str, intent: str = "") -> VersionRow:
    return VersionRow(vid, parents, "m", {"intent": intent}, step, "2026-12-06T00:00:00+00:00")


def test_a_branching_lineage_renders_as_a_tree() -> None:
    versions = [_v("root0000", [], "init", "initial"), _v("aaaa0000", ["root0000"], "s1", "try a"),
                _v("bbbb0000", ["root0000"], "s2", "try b"), _v("a1110000", ["aaaa0000"], "s3"),
                _v("merge000", ["bbbb0000", "aaaa0000"], "s4", "merge")]
    results = {"root0000": {"select": [0.0, 1.0], "practice": [1.0]}, "aaaa0000": {"select": [1.0, 1.0]},
               "a1110000": {"select": [0.0, 0.0], "test": [1.0, 0.0, 1.0, 1.0]}}
    stats = node_stats(versions, results)
    assert [s.children for s in stats] == [2, 1, 1, 0, 0]
    assert stats[0].clade_val == (0.0, 1.0, 1.0, 1.0, 0.0, 0.0)
    text = render(stats, selected="a1110000", width=4)
    assert text.splitlines() == [
        "root  practice 1.00 (n=1); val 0.50 (n=2); clade val 0.50 (n=6)  [init] initial",
        "├─ aaaa  val 1.00 (n=2); clade val 0.50 (n=4)  [s1] try a",
        "│  └─ ★ a111  val 0.00 (n=2); test 0.75 (n=4)  [s3]",
        "└─ bbbb  not graded  [s2] try b",
        "   └─ merg  not graded  [s4] merge",
    ]


def test_rollout_results_pool_into_a_clade_of_their_own() -> None:
    versions = [_v("root", [], "init"), _v("kid", ["root"], "s1")]
    stats = node_stats(versions, {"root": {"rollout": [0.0, 0.0]}, "kid": {"rollout": [1.0, 1.0, 1.0, 1.0]}})
    assert stats[0].clade_rollouts == (0.0, 0.0, 1.0, 1.0, 1.0, 1.0) and stats[0].clade_val == ()
    assert render(stats).splitlines()[0] == "root  rollouts 0.00 (n=2); clade rollouts 0.67 (n=6)  [init]"


def test_a_lineage_policys_own_statistic_is_shown_per_node() -> None:
    from evoarena.report.lineage_tree import with_policy
    from evoarena.search import Scored, dgm_weights, ucb_scores

    versions = [_v("root", [], "init"), _v("kid", ["root"], "s1"), _v("kid2", ["kid"], "s2")]
    results = {"root": {"rollout": [0.0, 1.0]}, "kid": {"rollout": [1.0, 1.0]}, "kid2": {"rollout": [0.0]}}
    archive = [Scored("root", (0.0, 1.0)), Scored("kid", (1.0, 1.0), "root"), Scored("kid2", (0.0,), "kid")]
    ucb = with_policy(node_stats(versions, results), "ucb")
    assert [s.policy for s in ucb] == [f"UCB {u:.2f}" for u in ucb_scores(archive)]
    dgm = with_policy(node_stats(versions, results), "dgm")
    assert [s.policy for s in dgm] == [f"DGM weight {w:.2f}" for w in dgm_weights(archive)]
    assert render(ucb).splitlines()[1].split("; ")[-1].startswith("UCB ")
    assert [s.policy for s in with_policy(node_stats(versions, results), "clade")] == ["", "", ""]


def test_versions_shows_the_hgm_cells_parent_policy_statistic(tmp_path: Path, make_spec: Any) -> None:
    hgm = {"name": "hgm", "label": "hgm-ucb", "params": {"parent_policy": "ucb", "actions_per_step": 6}}
    spec = make_spec(methods=[hgm], models={"s": {"backend": "scripted", "model": "echo"}},
                     roles={"solver": "s", "proposer": "s"})
    run_experiment(spec, tmp_path / "run", probe=False)
    result = CliRunner().invoke(app, ["versions", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "hgm-ucb" in result.output and "UCB " in result.output
