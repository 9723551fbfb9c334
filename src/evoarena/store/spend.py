"""What the score-vs-spend curves read: a cell's practice spending step by step (the ledger's calls, tokens and dollars
per practice unit, in the order the steps ran) and its checkpoints' test scores."""

from __future__ import annotations

import re
from dataclasses import dataclass

from evoarena.store.db import RunStore

_STEP = re.compile(r"^practice/e(\d+)/(\d+)/")


@dataclass(frozen=True)
class StepSpend:
    """One practice step's spending, counted as the budget counts it (cached calls too, provider errors not)."""

    unit: str
    calls: int
    tokens: int
    usd: float


def practice_spend(store: RunStore, cell: str) -> list[StepSpend]:
    """Every finished practice step of `cell` in the order it ran (epoch, then place in the epoch), with what it
    spent; step n of a selection's candidates is the first n of these."""
    keys = [str(r["key"]) for r in store.query("SELECT key FROM units WHERE cell=? AND key LIKE 'practice/%'",
                                               [cell])]
    spent = {str(r["unit"]): r for r in store.query(
        "SELECT unit, COUNT(*) AS n, SUM(input_tokens + output_tokens) AS t, SUM(cost_usd) AS usd FROM calls"
        " WHERE cell=? AND phase='practice' AND error IS NULL GROUP BY unit", [cell])}

    def order(key: str) -> tuple[int, int, str]:
        m = _STEP.match(key)
        return (int(m.group(1)), int(m.group(2)), key) if m else (1 << 30, 0, key)

    out = []
    for key in sorted(keys, key=order):
        r = spent.get(key)
        out.append(StepSpend(key, int(r["n"]) if r else 0, int(r["t"] or 0) if r else 0,
                             float(r["usd"] or 0.0) if r else 0.0))
    return out


def checkpoint_tests(store: RunStore, cell: str) -> dict[str, dict[str, float]]:
    """Each version of `cell` graded on the test split — the selected one in phase test, others in phase curve
    (`evoarena curve`) — as task → score (provider errors left out)."""
    out: dict[str, dict[str, float]] = {}
    for r in store.query("SELECT version_id, task_id, score FROM attempts WHERE cell=? AND phase IN ('test', 'curve')"
                         " AND error IS NULL AND score IS NOT NULL ORDER BY id", [cell]):
        out.setdefault(str(r["version_id"]), {})[str(r["task_id"])] = float(r["score"])
    return out

