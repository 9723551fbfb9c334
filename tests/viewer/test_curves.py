"""The curves page in a real browser: the practice chart has per condition a running-mean line with a point per
practice step the store holds, ending at the mean of the step scores, and a dashed line with a point per checkpoint
graded on val; the tokens chart a line per role ending at the role's ledger total."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from view_server import Server


def _db(runs_root: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{(runs_root / 'arith-basics' / 'run.sqlite').as_uri()}?mode=ro", uri=True)


def test_curves_has_a_running_mean_and_val_per_checkpoint(viewer: Server, runs_root: Path, page: Any,
                                                           shoot: Any) -> None:
    page.goto(viewer.url + "/run/arith-basics")
    page.locator("nav.pages a", has_text="curves").click()
    page.wait_for_url("**/run/arith-basics/curves")
    with _db(runs_root) as db:
        step_means: dict[str, list[float]] = {}
        for cond, mean in db.execute(
                "SELECT c.condition, AVG(a.score) FROM attempts a JOIN cells c ON c.cell = a.cell"
                " WHERE a.phase IN ('practice', 'rollout') AND a.score IS NOT NULL GROUP BY a.cell, a.unit_key"
                " ORDER BY MIN(a.id)"):
            step_means.setdefault(cond, []).append(mean)
        checkpoints = dict(db.execute(
            "SELECT c.condition, COUNT(DISTINCT a.version_id) FROM attempts a JOIN cells c ON c.cell = a.cell"
            " WHERE a.phase = 'select' GROUP BY c.condition").fetchall())
        tokens = dict(db.execute("SELECT role, SUM(input_tokens + output_tokens) FROM calls GROUP BY role").fetchall())
    assert len(step_means) == 3
    for cond, means in step_means.items():
        line = page.locator(f"#practice-curve g.series[data-series='{cond}']")
        assert int(line.get_attribute("data-points")) == len(means) == 12
        assert len(line.locator("polyline").get_attribute("points").split()) == len(means)
        assert line.locator("circle").count() == len(means)
        assert float(line.get_attribute("data-last")) == pytest.approx(sum(means) / len(means))
        val = page.locator(f"#practice-curve g.series[data-series='{cond} val']")
        assert int(val.get_attribute("data-points")) == checkpoints[cond] >= 1
        assert val.locator("polyline").get_attribute("stroke-dasharray")
        assert val.locator("polyline").get_attribute("stroke") == line.locator("polyline").get_attribute("stroke")
    reflexion = page.locator("#practice-table tr[data-condition='reflexion'] td.val .checkpoint")
    assert reflexion.count() == checkpoints["reflexion"] and reflexion.first.inner_text().startswith("0: ")
    assert "practice step" in page.locator("#practice-curve text.x-label").text_content()
    roles = page.locator("#token-curve g.series")
    assert sorted(roles.nth(i).get_attribute("data-series") for i in range(roles.count())) == sorted(tokens)
    for role, total in tokens.items():  # each role's line ends at its ledger total
        assert float(page.locator(f"#token-curve g.series[data-series='{role}']").get_attribute("data-last")) == total
    shoot(page, "curves")
