"""Read-only queries `evoarena view` makes (SQL lives in `store/`): run totals, and pages of the big tables."""

from __future__ import annotations

from dataclasses import dataclass

from evoarena.store.db import RunStore


@dataclass(frozen=True)
class RunTotals:
    """A run at a glance: calls, tokens and cost in the ledger, attempts kept, the models that answered (their ids,
    e.g. an embedded GGUF's sha256) and the time of the last write."""

    calls: int
    errors: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    attempts: int
    models: tuple[tuple[str, str], ...]  # (spec model name, model id)
    last_write: str | None


def run_totals(store: RunStore) -> RunTotals:
    c = store.query_one(
        "SELECT COUNT(*) AS n, SUM(error IS NOT NULL) AS errors, SUM(input_tokens) AS i, SUM(output_tokens) AS o,"
        " SUM(cost_usd) AS cost, MAX(created_at) AS last FROM calls") or {}
    a = store.query_one("SELECT COUNT(*) AS n, MAX(created_at) AS last FROM attempts") or {}
    models = store.query("SELECT DISTINCT model, model_id FROM calls ORDER BY model, model_id")
    last = max((t for t in (c.get("last"), a.get("last")) if t), default=None)
    return RunTotals(int(c.get("n") or 0), int(c.get("errors") or 0), int(c.get("i") or 0), int(c.get("o") or 0),
                     float(c.get("cost") or 0.0), int(a.get("n") or 0),
                     tuple((str(m["model"]), str(m["model_id"])) for m in models), last)
