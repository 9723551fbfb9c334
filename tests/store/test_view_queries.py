"""The viewer's run totals: one grouped pass over the ledger gives the same totals per role as `totals_by_role`, and
run-wide sums, models and last write that agree with them."""

from __future__ import annotations

from pathlib import Path

from evoarena.store import RunStore, TextResponse
from evoarena.store.calls import totals_by_role
from evoarena.store.view_queries import run_totals

ROW = dict(backend="scripted", params="{}", prompt_hash="h", cache_key="k", latency_s=0.0, retries=0,
           phase="practice")


def _call(store: RunStore, role: str, model: str, *, tokens: int, cost: float, cached: int = 0,
          error: str | None = None) -> None:
    store.record_call(request=[("user", "q")], response=TextResponse("a"), cell="c", unit="u", role=role,
                      model=model, model_id=f"id:{model}", input_tokens=tokens, output_tokens=2 * tokens,
                      cost_usd=cost, cached=cached, error=error, **ROW)


def test_one_pass_agrees_with_the_per_role_query(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    _call(store, "solver", "small", tokens=3, cost=0.5)
    _call(store, "solver", "big", tokens=5, cost=1.0, cached=1)  # one role answered by two models
    _call(store, "evolver", "big", tokens=7, cost=2.0, error="timeout")
    totals = run_totals(store)
    assert list(totals.roles) == totals_by_role(store)
    assert (totals.calls, totals.errors, totals.input_tokens, totals.output_tokens) == (3, 1, 15, 30)
    assert totals.cost_usd == 3.5 and totals.attempts == 0
    assert totals.models == (("big", "id:big"), ("small", "id:small"))
    last = store.query_one("SELECT MAX(created_at) AS t FROM calls")
    assert last is not None and totals.last_write == last["t"]


def test_an_empty_ledger(tmp_path: Path) -> None:
    totals = run_totals(RunStore(tmp_path / "run"))
    assert (totals.calls, totals.models, totals.roles, totals.last_write) == (0, (), (), None)
