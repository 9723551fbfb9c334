"""Read-only queries `evoarena view` makes (SQL lives in `store/`): run totals, and pages of the big tables."""

from __future__ import annotations

from dataclasses import dataclass

from evoarena.store.calls import RoleTotals
from evoarena.store.db import RunStore


@dataclass(frozen=True)
class RunTotals:
    """A run at a glance: calls, tokens and cost in the ledger, attempts kept, the models that answered (their ids,
    e.g. an embedded GGUF's sha256), the time of the last write, and the ledger's totals per role."""

    calls: int
    errors: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    attempts: int
    models: tuple[tuple[str, str], ...]  # (spec model name, model id)
    last_write: str | None
    roles: tuple[RoleTotals, ...] = ()


_SUMS = ("calls", "cached_calls", "errors", "i", "o", "cost")


def run_totals(store: RunStore) -> RunTotals:
    """One pass over the ledger (grouped by role and model) for the run's totals, its models and its roles."""
    rows = store.query(
        "SELECT role, model, model_id, COUNT(*) AS calls, SUM(cached) AS cached_calls,"
        " SUM(error IS NOT NULL) AS errors, SUM(input_tokens) AS i, SUM(output_tokens) AS o, SUM(cost_usd) AS cost,"
        " MAX(created_at) AS last FROM calls GROUP BY role, model, model_id")
    a = store.query_one("SELECT COUNT(*) AS n, MAX(created_at) AS last FROM attempts") or {}
    per_role: dict[str, list[float]] = {}
    for r in rows:
        acc = per_role.setdefault(str(r["role"]), [0.0] * len(_SUMS))
        for k, key in enumerate(_SUMS):
            acc[k] += r[key] or 0
    roles = tuple(RoleTotals(role, int(v[0]), int(v[1]), int(v[2]), int(v[3]), int(v[4]), float(v[5]))
                  for role, v in sorted(per_role.items()))
    models = sorted({(str(r["model"]), str(r["model_id"])) for r in rows})
    last = max([str(t) for t in [*(r["last"] for r in rows), a.get("last")] if t], default=None)
    return RunTotals(sum(r.calls for r in roles), sum(r.errors for r in roles), sum(r.input_tokens for r in roles),
                     sum(r.output_tokens for r in roles), sum(r.cost_usd for r in roles), int(a.get("n") or 0),
                     tuple(models), last, roles)
