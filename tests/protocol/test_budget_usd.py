"""A dollar budget: `budget.max_usd` is spent call by call at each model's price, refused like `max_tokens`, shown
in the cell's budget, and a negative one stops the spec in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evoarena.protocol.budget import BudgetExhausted, BudgetMeter
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import Budget, SpecError, parse_spec
from evoarena.store import RunStore

PRICED = {"scripted": {"backend": "scripted", "model": "arith-student",
                       "price": {"input_per_mtok": 1000.0, "output_per_mtok": 1000.0}}}  # $0.001 a token


def test_the_meter_refuses_once_the_dollars_are_spent() -> None:
    meter = BudgetMeter(Budget(max_usd=0.05))
    meter.before_call()
    meter.after_call(30, 0.03)
    meter.before_call()
    meter.after_call(30, 0.03)
    with pytest.raises(BudgetExhausted, match=r"budget exhausted: max_usd=0.05"):
        meter.before_call()
    assert not meter.can_pay(1) and meter.state()["usd"] == pytest.approx(0.06)
    again = BudgetMeter(Budget(max_usd=0.05))
    again.restore(meter.state())
    assert again.usd == pytest.approx(0.06)
    assert "usd" not in BudgetMeter(Budget()).state()  # a free, unlimited cell's state reads as before


def test_a_negative_dollar_budget_is_one_line() -> None:
    with pytest.raises(SpecError) as err:
        parse_spec({"name": "x", "benchmark": {"name": "arith"}, "methods": [{"name": "frozen"}],
                    "models": PRICED, "roles": {"solver": "scripted"}, "budget": {"max_usd": -1}})
    assert str(err.value) == "budget.max_usd: must be at least 0 (got -1)"


def test_an_unset_dollar_budget_leaves_the_spec_hash_alone(make_spec: Any) -> None:
    spec = make_spec()
    assert spec.budget.dumped() == {"max_attempts": None, "max_calls": None, "max_tokens": None}
    assert make_spec(budget={"max_usd": 1.0}).spec_hash() != spec.spec_hash()


def test_a_run_stops_practice_at_its_dollar_budget_and_reports_the_spend(tmp_path: Path, make_spec: Any) -> None:
    spec = make_spec(methods=[{"name": "reflexion"}], models=PRICED, budget={"max_usd": 0.3})
    results = run_experiment(spec, tmp_path / "run", probe=False)
    (b,) = results["budgets"]
    assert b["limits"]["max_usd"] == 0.3 and b["exhausted"] and b["used"]["usd"] >= 0.3
    store = RunStore(tmp_path / "run")
    spent = store.query_one("SELECT SUM(cost_usd) AS s FROM calls WHERE phase IN ('practice', 'select')")["s"]
    assert b["used"]["usd"] == pytest.approx(spent)  # the meter counts what the ledger prices
    reasons = {json.loads(r["payload"])["reason"] for r in store.query(
        "SELECT payload FROM events WHERE kind='budget_exhausted'")}
    assert reasons == {"budget exhausted: max_usd=0.3"}
    free = run_experiment(make_spec(methods=[{"name": "reflexion"}], models=PRICED), tmp_path / "free", probe=False)
    assert free["budgets"][0]["used"]["calls"] > b["used"]["calls"]  # without the limit it spends more
    assert "usd used / limit" in (tmp_path / "run" / "report.html").read_text()
