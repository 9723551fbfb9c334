"""HGM's final pick: the best posterior mean of own results among nodes with at least `min_own_evals` of them.
The release (metauto-ai/HGM @013872d, hgm.py `update_metadata`) only logs each node's `mean_utility` and
`num_evals` and treats a node with no evaluation as having no mean (tree.py `mean_utility` = inf, excluded by
`np.isfinite` in `expand`), so an unevaluated node, whose prior mean is 0.5, is never picked here."""

from __future__ import annotations

import pytest

from evoarena.methods.hgm.method import Hgm, Node
from evoarena.protocol.catalog import build_method


def _nodes(*results: dict[str, float]) -> dict[str, Node]:
    return {f"n{i}": Node(id=f"n{i}", parent=None if i == 0 else "n0", system=str(i), results=r)
            for i, r in enumerate(results)}


def _hgm(**params: object) -> Hgm:
    method = build_method("hgm", dict(params))
    assert isinstance(method, Hgm)
    return method


def test_an_unevaluated_child_is_never_live_even_when_every_evaluated_node_is_below_half() -> None:
    """Prior mean (1 + 0) / (2 + 0) = 0.5 beats the root's (1 + 0) / (2 + 2) = 0.25, yet the root stays live."""
    nodes = _nodes({"a": 0.0, "b": 0.0}, {})
    assert _hgm()._live(nodes) == "n0"


def test_a_node_needs_min_own_evals_to_be_live() -> None:
    """One success (posterior 2/3) beats 3 of 5 (4/7) only when one evaluation is enough."""
    nodes = _nodes({"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.0, "e": 0.0}, {"a": 1.0})
    assert _hgm()._live(nodes) == "n1"
    assert _hgm(min_own_evals=3)._live(nodes) == "n0"


def test_the_root_is_live_while_no_node_has_enough_evaluations() -> None:
    assert _hgm(min_own_evals=5)._live(_nodes({"a": 0.0}, {"a": 1.0, "b": 1.0})) == "n0"


def test_the_default_is_the_releases_finite_mean_rule() -> None:
    """hgm.py `expand`: a node counts once `np.isfinite(node.mean_utility)`, i.e. after one evaluation."""
    assert Hgm.Params().min_own_evals == 1


def test_zero_is_refused() -> None:
    with pytest.raises(ValueError, match="min_own_evals"):
        build_method("hgm", {"min_own_evals": 0})
