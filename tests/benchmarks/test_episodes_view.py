"""The `episodes` report view: one practice episode read from its outcome JSON (steps by kind, meta-actions by name,
harness calls by type), and the view applying to interactive benchmarks only."""

from __future__ import annotations

import json

from evoarena.api.views import RunInfo
from evoarena.benchmarks.episodes_view import EpisodesView, episode_row


def test_an_episode_row_counts_kinds_meta_actions_and_calls() -> None:
    trace = [{"kind": "meta", "action": "recall[key]", "calls": {"solver": 1}},
             {"kind": "env", "action": "go north", "calls": {"solver": 1, "critic": 1}},
             {"kind": "meta", "action": "note[the key is red]", "calls": {"solver": 1}},
             {"kind": "env", "action": "take key"}]
    answer = json.dumps({"score": 1, "max_score": 1, "won": True, "steps": 4, "stopped": "done", "trace": trace})
    row = episode_row(1.0, True, None, answer, {"solver": 900})
    assert row["steps"] == 4 and row["kinds"] == {"meta": 2, "env": 2}
    assert row["meta"] == {"recall": 1, "note": 1} and row["calls"] == {"solver": 3, "critic": 1}
    assert row["tokens"] == {"solver": 900} and row["won"] is True


def test_an_episode_without_an_outcome_keeps_its_score_and_error() -> None:
    row = episode_row(None, None, "provider down", None, {})
    assert row["steps"] is None and row["error"] == "provider down" and row["calls"] == {}
    assert episode_row(0.0, False, None, "not json", {})["steps"] is None


def test_the_view_applies_to_interactive_benchmarks_only() -> None:
    import evoarena.benchmarks  # noqa: F401  (registers the benchmarks)

    v = EpisodesView()
    assert v.applies(RunInfo("r", "maze", frozenset({"frozen"}), "mechanism"))
    assert v.applies(RunInfo("r", "textworld", frozenset({"frozen"}), "mechanism"))
    assert not v.applies(RunInfo("r", "arith", frozenset({"frozen"}), "mechanism"))
    assert not v.applies(RunInfo("r", "no-such-benchmark", frozenset(), "mechanism"))
