from __future__ import annotations

import json
import random

import pytest
from report_samples import make_budgets, make_calls, make_meta, make_scores

from evoarena.report import CallRecord, ScoreRecord
from evoarena.report import build_results as build_record


def build_results(*args: object, **kwargs: object) -> dict:
    """results.json's content, as these tests read it."""
    return build_record(*args, **kwargs).model_dump()  # type: ignore[arg-type]


def _dump(results: dict) -> str:
    return json.dumps(results, sort_keys=True, indent=2)


def _cell(results: dict, condition: str, model: str = "scripted") -> dict:
    return next(c for c in results["conditions"] if c["condition"] == condition and c["model"] == model)


def test_deterministic(sample) -> None:
    assert _dump(build_results(*sample)) == _dump(build_results(*sample))


def test_input_order_does_not_matter(sample) -> None:
    meta, scores, calls, budgets = sample
    shuffled = []
    for seq in (scores, calls, budgets):
        seq = list(seq)
        random.Random(1).shuffle(seq)
        shuffled.append(seq)
    assert _dump(build_results(meta, *shuffled)) == _dump(build_results(*sample))


def test_meta_and_evidence_copied(sample) -> None:
    r = build_results(*sample)
    assert r["evidence"] == "mechanism"
    assert r["meta"]["evidence"] == "mechanism"
    assert r["meta"]["started_at"] == "2024-05-01T10:00:00Z"
    assert set(r["meta"]) >= {"run_id", "spec_hash", "code_version", "test_split_hash", "isolation", "extra"}


def test_conditions_sorted_with_ci(sample) -> None:
    r = build_results(*sample)
    assert [(c["condition"], c["model"]) for c in r["conditions"]] == [
        ("frozen", "scripted"),
        ("reflexion", "scripted"),
    ]
    for c in r["conditions"]:
        t = c["test"]
        assert t["ci_low"] <= t["mean"] <= t["ci_high"]
        assert t["n_tasks"] == 20 and t["n_errors"] == 0 and t["n_seeds"] == 2
        assert [s["seed"] for s in t["per_seed"]] == [0, 1]
        assert t["seed_ci"]["n_seeds"] == 2
        assert c["val"]["n_tasks"] == 5


def test_pooled_mean_matches_records(sample) -> None:
    meta, scores, calls, budgets = sample
    r = build_results(meta, scores, calls, budgets)
    graded = [s.score for s in scores if s.condition == "frozen" and s.split == "test"]
    assert _cell(r, "frozen")["test"]["mean"] == pytest.approx(sum(graded) / len(graded), abs=1e-6)


def test_single_seed_has_no_seed_ci_and_val_absent() -> None:
    r = build_results(make_meta(), make_scores(seeds=(0,), with_val=False), [], [])
    cell = _cell(r, "frozen")
    assert cell["test"]["seed_ci"] is None
    assert cell["val"] is None


def test_errors_excluded_from_accuracy_but_counted() -> None:
    scores = [
        ScoreRecord("frozen", "scripted", 0, "test", "a", 1.0),
        ScoreRecord("frozen", "scripted", 0, "test", "b", 1.0),
        ScoreRecord("frozen", "scripted", 0, "test", "c", 0.0, error=True),
        ScoreRecord("frozen", "scripted", 0, "test", "d", 0.0, error=True),
    ]
    t = _cell(build_results(make_meta(), scores, [], []), "frozen")["test"]
    assert t["mean"] == 1.0
    assert t["n_tasks"] == 2 and t["n_graded"] == 2
    assert t["n_errors"] == 2
    assert t["per_seed"][0]["n_errors"] == 2


def test_pass_rate_is_hard_accuracy_next_to_the_mean_score() -> None:
    scores = [
        ScoreRecord("skillprox", "scripted", 0, "test", "a", 1.0, passed=True),
        ScoreRecord("skillprox", "scripted", 0, "test", "b", 0.9, passed=False),
        ScoreRecord("skillprox", "scripted", 0, "test", "c", 0.5, passed=False),
        ScoreRecord("skillprox", "scripted", 0, "test", "d", 0.0, error=True, passed=None),
    ]
    t = _cell(build_results(make_meta(), scores, [], []), "skillprox")["test"]
    assert t["mean"] == 0.8 and t["pass_rate"]["mean"] == round(1 / 3, 6)
    assert t["pass_rate"]["ci_low"] <= t["pass_rate"]["mean"] <= t["pass_rate"]["ci_high"]
    no_verdicts = [ScoreRecord("frozen", "scripted", 0, "test", "a", 1.0)]
    assert _cell(build_results(make_meta(), no_verdicts, [], []), "frozen")["test"]["pass_rate"] is None


def test_all_errors_gives_null_accuracy() -> None:
    scores = [ScoreRecord("frozen", "scripted", 0, "test", "a", 0.0, error=True)]
    r = build_results(make_meta(), scores, [], [])
    t = _cell(r, "frozen")["test"]
    assert t["mean"] is None and t["ci_low"] is None and t["n_errors"] == 1 and t["n_tasks"] == 0
    json.dumps(r, allow_nan=False)


def test_cached_calls_counted_and_flagged(sample) -> None:
    calls = build_results(*sample)["calls"]
    n = len(make_calls())
    assert calls["totals"]["calls"] == n
    assert calls["totals"]["cached_calls"] == n // 2
    assert calls["totals"]["input_tokens"] == 100 * n
    assert calls["totals"]["cost_usd"] == pytest.approx(0.0015 * n)
    assert calls["totals"]["cached_cost_usd"] == pytest.approx(0.0015 * n / 2)
    frozen = next(c for c in calls["by_condition"] if c["condition"] == "frozen")
    assert frozen["by_role"]["solver"]["calls"] == 6
    assert frozen["by_role"]["solver"]["cached_calls"] == 3
    assert frozen["by_phase"]["test"]["calls"] == 4
    assert calls["by_condition"][-1]["condition"] is None  # calls outside any condition come last
    assert sum(row["calls"] for row in calls["rows"]) == n


def test_call_errors_counted() -> None:
    row = CallRecord("frozen", "scripted", 0, "solver", "m", 5, 0, 0.0, 1.0, False, "timeout", "practice")
    r = build_results(make_meta(), [], [row, row], [])
    assert r["calls"]["totals"]["errors"] == 2
    assert r["calls"]["totals"]["calls"] == 2


def test_budgets_listed_per_cell(sample) -> None:
    budgets = build_results(*sample)["budgets"]
    assert [(b["condition"], b["seed"]) for b in budgets] == [("frozen", 0), ("reflexion", 0)]
    refl = budgets[1]
    assert refl["exhausted"] is True
    assert refl["limits"]["max_calls"] is None
    assert refl["fraction_used"] == {"attempts": 1.0, "tokens": 0.8}


def test_budget_only_cell_appears_in_conditions() -> None:
    r = build_results(make_meta(), [], [], make_budgets())
    assert [c["condition"] for c in r["conditions"]] == ["frozen", "reflexion"]
    assert r["conditions"][0]["test"] is None


def test_floats_rounded() -> None:
    scores = [ScoreRecord("c", "m", 0, "test", str(i), s) for i, s in enumerate([1.0, 0.0, 0.0])]
    t = _cell(build_results(make_meta(), scores, [], []), "c", "m")["test"]
    assert t["mean"] == 0.333333


@pytest.mark.parametrize(
    "bad",
    [
        ScoreRecord("c", "m", 0, "train", "a", 1.0),
        ScoreRecord("c", "m", 0, "test", "a", 1.5),
        ScoreRecord("c", "m", 0, "test", "a", float("nan")),
    ],
)
def test_invalid_scores_rejected(bad: ScoreRecord) -> None:
    with pytest.raises(ValueError):
        build_results(make_meta(), [bad], [], [])


def test_duplicate_scores_rejected() -> None:
    rec = ScoreRecord("c", "m", 0, "test", "a", 1.0)
    with pytest.raises(ValueError, match="duplicate"):
        build_results(make_meta(), [rec, rec], [], [])


def test_unknown_evidence_rejected() -> None:
    with pytest.raises(ValueError, match="evidence"):
        build_results(make_meta("anecdote"), [], [], [])


def test_empty_inputs() -> None:
    r = build_results(make_meta("scaled"), [], [], [])
    assert r["conditions"] == [] and r["budgets"] == [] and r["calls"]["totals"]["calls"] == 0


def test_identical_scores_give_identical_intervals() -> None:
    """A CI depends only on the scores: two conditions (and two models) with the same per-task scores get the same
    interval on every split, and the same pass rate."""
    rng = random.Random(3)
    pattern = [float(rng.random() < 0.33) for _ in range(60)]
    scores = [ScoreRecord(c, m, 0, split, f"t{t:02d}", s, passed=s == 1.0)
              for c, m in (("ace", "a"), ("frozen", "a"), ("ace", "b"))
              for split in ("test", "val") for t, s in enumerate(pattern)]
    r = build_results(make_meta(), scores, [], [], ["frozen", "ace"])
    ace, frozen, other = _cell(r, "ace", "a"), _cell(r, "frozen", "a"), _cell(r, "ace", "b")
    for split in ("test", "val"):
        assert ace[split]["ci_low"] < ace[split]["mean"] < ace[split]["ci_high"]
        assert ace[split] == frozen[split] == other[split]


def test_prompt_tokens_computed_are_summed_where_known_and_absent_otherwise() -> None:
    from dataclasses import replace

    row = CallRecord("frozen", "scripted", 0, "solver", "m", 100, 3, 0.0, 1.0, False, None, "practice")
    r = build_results(make_meta(), [], [row, row], [])
    assert "input_tokens_evaluated" not in r["calls"]["totals"]  # no backend said: results.json is as before
    told = [replace(row, input_tokens_evaluated=n) for n in (100, 20)]
    hit = replace(row, cached=True, input_tokens_evaluated=0)
    assert "input_tokens_evaluated" not in build_results(make_meta(), [], [hit, row], [])["calls"]["totals"]
    r = build_results(make_meta(), [], [*told, row, hit], [])
    assert r["calls"]["totals"]["input_tokens"] == 400
    assert r["calls"]["totals"]["input_tokens_evaluated"] == 120
    assert r["calls"]["by_role"]["solver"]["input_tokens_evaluated"] == 120
