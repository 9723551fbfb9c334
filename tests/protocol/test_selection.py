"""Why a cell tested the version it did: the reason for each way a selection ends, the reserve a call budget holds
back from practice for grading the initial and final versions on val, and the warning when a final version goes
ungraded anyway — as the schedule decides it and as results.json, the CLI summary, report.html and `evolve()` show
it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evoarena.cli.results import print_results
from evoarena.one_call import evolve
from evoarena.protocol.budget import BudgetExhausted, BudgetMeter
from evoarena.protocol.run.runner import run_experiment
from evoarena.report.results_record import RunResults
from evoarena.spec import Budget, SpecError
from evoarena.store import RunStore
from evoarena.store.selection import Candidate, Reason, decide

INIT, A, B = "i" * 64, "a" * 64, "b" * 64


def test_a_tie_keeps_the_earliest_and_says_so() -> None:
    sel = decide((Candidate(INIT, 0, 0.25), Candidate(A, 20, 0.25)), A, n_val=4)
    assert (sel.reason, sel.selected) == (Reason.TIE, INIT)
    assert sel.text() == ("val tie → earliest kept (the initial version at 0.250 = the step-20 version aaaaaaaa at "
                          "0.250)")


def test_a_lower_final_keeps_the_better_earlier_version() -> None:
    sel = decide((Candidate(INIT, 0, 0.25), Candidate(A, 5, 0.5), Candidate(B, 20, 0.2)), B, n_val=4)
    assert (sel.reason, sel.selected) == (Reason.FINAL_LOWER, A)
    assert sel.text().startswith("final val lower (the step-20 version bbbbbbbb at 0.200 < the step-5 version")


def test_the_best_final_is_selected_and_an_unchanged_method_keeps_the_initial() -> None:
    sel = decide((Candidate(INIT, 0, 0.25), Candidate(A, 20, 0.4)), A, n_val=4)
    assert (sel.reason, sel.selected, sel.warning()) == (Reason.BEST, A, None)
    assert sel.text() == "selected the step-20 version aaaaaaaa at 0.400 on val"
    assert decide((Candidate(INIT, 0, 0.0),), INIT, n_val=4).reason is Reason.UNCHANGED


def test_an_ungraded_final_is_its_own_reason_with_a_warning_even_when_an_earlier_one_would_win() -> None:
    sel = decide((Candidate(INIT, 0, 0.1), Candidate(A, 5, 0.3), Candidate(B, 9, None, skipped=True)), B, n_val=4)
    assert (sel.reason, sel.selected) == (Reason.FINAL_UNSCORED, A)
    assert sel.warning() is not None and "was never scored on val" in sel.warning()


def test_the_reserve_is_held_back_from_practice_and_spent_by_selection() -> None:
    meter = BudgetMeter(Budget(max_calls=14), reserve_calls=10)
    for _ in range(4):
        meter.before_call()
        meter.after_call(1)
    with pytest.raises(BudgetExhausted, match="max_calls=14 less 10 kept for val"):
        meter.before_call()
    meter.enforce = False  # selection
    assert meter.can_pay(5) and meter.can_pay(10) and not meter.can_pay(11)
    assert BudgetMeter(Budget(max_tokens=5), tokens=5).can_pay(1) is False


def small(tmp_path: Path, make_spec: Any, **over: Any) -> tuple[dict[str, Any], RunStore]:
    spec = make_spec(methods=[{"name": "reflexion"}], **over)
    results = run_experiment(spec, tmp_path / "run", probe=False)
    return results, RunStore(tmp_path / "run")


def test_the_scripted_model_ends_in_a_tie_and_in_a_lower_final(tmp_path: Path, make_spec: Any) -> None:
    """bootstrap_fewshot's demos: on sums the scripted student already solves, every checkpoint ties the initial
    version (kept: the earliest); on products and sums with two demos, the last demos it picks lose what it learnt."""
    demos = [{"name": "bootstrap_fewshot", "params": {"max_labeled_demos": 2, "max_bootstrapped_demos": 2}}]

    def select(name: str, seed: int, families: list[str]) -> dict[str, Any]:
        bench = {"name": "arith", "params": {"seed": seed, "n_train": 6, "n_val": 6, "n_test": 4, "families": families}}
        spec = make_spec(methods=demos, benchmark=bench, protocol={"select_every": 1})
        sel: dict[str, Any] = run_experiment(spec, tmp_path / name, probe=False)["selections"][0]
        store = RunStore(tmp_path / name)
        means = {r["version_id"]: r["m"] for r in store.query(
            "SELECT version_id, AVG(score) AS m FROM attempts WHERE phase='select' GROUP BY version_id")}
        assert {c["version"]: c["val"] for c in sel["candidates"]} == pytest.approx(means)  # the val attempts'
        assert store.query_one("SELECT selected_version FROM cells")["selected_version"] == sel["selected"]
        return sel

    tie = select("tie", 0, ["add"])
    assert tie["reason"] == "tie" and tie["selected"] == tie["candidates"][0]["version"] != tie["final"]
    assert tie["text"].startswith("val tie → earliest kept (the initial version at 1.000 = the step-")
    lower = select("lower", 1, ["add", "mul"])
    vals = {c["version"]: c["val"] for c in lower["candidates"]}
    assert lower["reason"] == "final_lower" and vals[lower["final"]] < vals[lower["selected"]] == max(vals.values())
    assert lower["text"].startswith(f"final val lower (the step-{lower['candidates'][-1]['step']} version")


def test_a_call_budget_that_runs_out_in_practice_still_grades_the_final_version(tmp_path: Path,
                                                                               make_spec: Any) -> None:
    """5 val tasks: 10 calls are kept back, so practice gets 4 and selection grades both versions within 14."""
    results, store = small(tmp_path, make_spec, budget={"max_calls": 14})
    (sel,) = results["selections"]
    assert results["budgets"][0]["used"]["calls"] == 14 and results["budgets"][0]["exhausted"]
    assert [c["val"] is not None for c in sel["candidates"]] == [True, True] and sel["final"] != sel["candidates"][0]
    assert sel["reason"] == "best" and sel["warning"] is None
    reasons = [json.loads(r["payload"])["reason"] for r in store.query(
        "SELECT payload FROM events WHERE kind='budget_exhausted'")]
    assert reasons == ["budget exhausted: max_calls=14 less 10 kept for val"]
    assert not store.query("SELECT id FROM events WHERE kind='final_unscored'")


def test_a_budget_that_cannot_pay_for_selection_is_refused_before_anything_is_written(tmp_path: Path,
                                                                                      make_spec: Any) -> None:
    with pytest.raises(SpecError, match=r"budget.max_calls=10 cannot pay for selection: .* takes 10 calls"):
        run_experiment(make_spec(budget={"max_calls": 10}), tmp_path / "run")
    assert not (tmp_path / "run").exists()
    run_experiment(make_spec(methods=[{"name": "frozen"}], budget={"max_calls": 10}, protocol={"select": "last"}),
                   tmp_path / "last", probe=False)  # no val grading: nothing to hold back


def test_a_final_version_the_budget_leaves_ungraded_is_warned_about_everywhere(
        tmp_path: Path, make_spec: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A token budget has no reserve (what a val grading costs in tokens is unknown before it runs)."""
    results, store = small(tmp_path, make_spec, budget={"max_tokens": 300})
    (sel,) = results["selections"]
    assert sel["reason"] == "final_unscored" and sel["selected"] == sel["candidates"][0]["version"]
    assert [(c["val"] is None, c["skipped"]) for c in sel["candidates"]] == [(False, False), (True, True)]
    events = store.query("SELECT cell, payload FROM events WHERE kind='final_unscored'")
    assert len(events) == 1 and json.loads(events[0]["payload"])["warning"] == sel["warning"]
    html = (tmp_path / "run" / "report.html").read_text()
    assert 'class="selection-warning"' in html and "was never scored on val" in html
    print_results(RunResults.model_validate(results))
    shown = capsys.readouterr().out
    assert "selected  reflexion (scripted, seed 0): the initial version kept: the final version" in shown
    assert "warning  reflexion (seed 0): the final version" in shown
    run_experiment(make_spec(methods=[{"name": "reflexion"}], budget={"max_tokens": 300}), tmp_path / "run",
                   probe=False)  # a resume warns no second time
    assert len(store.query("SELECT id FROM events WHERE kind='final_unscored'")) == 1


def test_select_last_and_no_val_say_the_last_version_was_kept_ungraded(tmp_path: Path, make_spec: Any) -> None:
    last, _ = small(tmp_path / "last", make_spec, protocol={"select": "last"})
    assert [(s["reason"], s["selected"] == s["final"]) for s in last["selections"]] == [("select_last", True)]
    bench = {"name": "arith", "params": {"seed": 0, "n_train": 4, "n_val": 0, "n_test": 4}}
    no_val, _ = small(tmp_path / "none", make_spec, benchmark=bench, budget={"max_calls": 3})
    assert [s["reason"] for s in no_val["selections"]] == ["no_val"]
    assert no_val["selections"][0]["text"].startswith("no val split:")


def test_evolve_says_why_its_version_was_selected(tmp_path: Path) -> None:
    got = evolve("arith", "reflexion", "scripted:arith-student", params={"seed": 0, "n_train": 4, "n_val": 3,
                                                                         "n_test": 4}, root=tmp_path)
    assert got.selection is not None and got.selection.selected == got.version
    assert got.selection.reason in {"best", "tie", "final_lower", "unchanged"} and got.selection.text
