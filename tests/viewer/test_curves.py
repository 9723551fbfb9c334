"""The curves page in a real browser: the practice chart has one line per condition with a point per practice step
the store holds, the tokens chart a line per role ending at the role's ledger total."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from view_server import Server


def _db(runs_root: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{(runs_root / 'quickstart' / 'run.sqlite').as_uri()}?mode=ro", uri=True)


def test_curves_has_a_line_per_condition_and_a_point_per_step(viewer: Server, runs_root: Path, page: Any,
                                                              shoot: Any) -> None:
    page.goto(viewer.url + "/run/quickstart")
    page.locator("nav.pages a", has_text="curves").click()
    page.wait_for_url("**/run/quickstart/curves")
    with _db(runs_root) as db:
        steps = dict(db.execute(
            "SELECT c.condition, COUNT(DISTINCT a.unit_key) FROM attempts a JOIN cells c ON c.cell = a.cell"
            " WHERE a.phase IN ('practice', 'rollout') AND a.score IS NOT NULL GROUP BY c.condition").fetchall())
        tokens = dict(db.execute("SELECT role, SUM(input_tokens + output_tokens) FROM calls GROUP BY role").fetchall())
    lines = page.locator("#practice-curve g.series")
    assert lines.count() == len(steps) == 3
    for i in range(lines.count()):
        line = lines.nth(i)
        name = line.get_attribute("data-series")
        assert int(line.get_attribute("data-points")) == steps[name] == 12
        assert len(line.locator("polyline").get_attribute("points").split()) == steps[name]
        assert line.locator("circle").count() == steps[name]
    assert "practice step" in page.locator("#practice-curve text.x-label").text_content()
    roles = page.locator("#token-curve g.series")
    assert sorted(roles.nth(i).get_attribute("data-series") for i in range(roles.count())) == sorted(tokens)
    for role, total in tokens.items():  # each role's line ends at its ledger total
        assert float(page.locator(f"#token-curve g.series[data-series='{role}']").get_attribute("data-last")) == total
    shoot(page, "curves")
