"""The conditions page in a real browser: each condition's test and val means and its difference to the baseline
are build_results' on the same store, refreshes of an unchanged run recompute nothing, and a run that is still
running shows its done cells' scores, its pending cells' progress, and new attempts without a reload."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from view_server import Server

from evoarena.report import build_results
from evoarena.report.collect import call_records, cell_budgets, run_meta, score_records
from evoarena.report.snapshot import RunSnapshot
from evoarena.store import AttemptRow, RunStore, queries
from evoarena.viewer import create_app, results_cache


def _expected(run_dir: Path) -> dict[str, Any]:
    store = RunStore(run_dir, read_only=True)
    try:
        snap = RunSnapshot.load(store)
        return build_results(run_meta(snap), score_records(store, snap), call_records(store, snap),
                             cell_budgets(snap), snap.conditions).model_dump()
    finally:
        store.close()


def _shown(page: Any) -> dict[tuple[str, str], dict[str, float | None]]:
    """{(condition, model): {"test", "val", "diff"}} as the page's data attributes give them."""
    out = {}
    for row in page.locator("#scores tbody tr").all():
        def attr(sel: str, name: str, row: Any = row) -> float | None:
            loc = row.locator(sel)
            return float(loc.get_attribute(name)) if loc.count() else None
        out[(row.get_attribute("data-condition"), row.get_attribute("data-model"))] = {
            "test": attr("td.test .score", "data-mean"), "val": attr("td.val .score", "data-mean"),
            "diff": attr("td.versus .score", "data-diff")}
    return out


def _check(shown: dict[tuple[str, str], dict[str, float | None]], results: dict[str, Any]) -> None:
    assert len(shown) == len(results["conditions"]) > 0
    for c in results["conditions"]:
        got = shown[(c["condition"], c["model"])]
        assert got["test"] == pytest.approx(c["test"]["mean"])
        assert got["val"] == (pytest.approx(c["val"]["mean"]) if c["val"] else None)
    for v in results["versus_baseline"]:
        got = shown[(v["condition"], v["model"])]
        assert got["diff"] == (None if v["condition"] == v["baseline"] else pytest.approx(v["diff"]))


def test_conditions_shows_build_results_numbers(viewer: Server, runs_root: Path, page: Any, shoot: Any) -> None:
    page.goto(viewer.url + "/run/arith-basics")
    page.locator("nav.pages a", has_text="conditions").click()
    page.wait_for_url("**/run/arith-basics/conditions")
    results = _expected(runs_root / "arith-basics")
    shown = _shown(page)
    _check(shown, results)
    assert [k[0] for k in shown] == RunSnapshot.load(RunStore(runs_root / "arith-basics", read_only=True)).conditions
    assert "baseline" in page.locator("#scores tbody tr").first.inner_text()
    # the reflexion cell's reflector calls and each cell's budget, as results.json has them
    reflector = page.locator("#by-role tr[data-condition='reflexion'][data-role='reflector']")
    row = next(r for r in results["calls"]["by_condition"] if r["condition"] == "reflexion")["by_role"]["reflector"]
    assert reflector.locator("td").nth(2).inner_text() == f"{row['calls']:,}"
    assert page.locator("#budgets tbody tr").count() == len(results["budgets"]) == 3
    assert page.locator("#by-phase tr[data-phase='test']").count() == 3
    shoot(page, "conditions")


def test_a_finished_run_reads_its_results_json(viewer: Server) -> None:
    text = TestClient(viewer.app).get("/run/arith-basics/conditions").text
    assert "Source: the run&#39;s results.json" in text and 'hx-trigger' not in text  # finished: no polling


def test_an_older_results_json_is_recomputed_from_the_store(tmp_path: Path, runs_root: Path) -> None:
    """A results.json written by older code (same schema version, a section missing — found on real runs) is not
    read: the page computes the results from the store and shows them."""
    import json

    old = tmp_path / "old"
    shutil.copytree(runs_root / "arith-basics", old)
    data = json.loads((old / "results.json").read_text())
    del data["versus_baseline"]
    (old / "results.json").write_text(json.dumps(data))
    response = TestClient(create_app([old])).get("/run/old/conditions")
    assert response.status_code == 200 and 'id="scores"' in response.text
    assert "Source: the store" in response.text


def test_a_refresh_of_an_unchanged_run_recomputes_nothing(tmp_path: Path, runs_root: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A running run's results are computed in the background (the page answers at once, saying so), once per
    store write mark: refreshes of an unchanged store reuse them."""
    writer, _ = _as_running(runs_root / "arith-basics", tmp_path / "slow")
    monkeypatch.setattr(results_cache, "WAIT_S", 0.0)
    client = TestClient(create_app([tmp_path / "slow"]))
    before = results_cache.computed
    first = client.get("/run/slow/conditions").text
    assert "Computing the scores" in first and 'id="scores"' not in first and 'hx-trigger="every 3s"' in first
    deadline = time.monotonic() + 30
    while results_cache.computed == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert results_cache.computed == before + 1
    for _ in range(3):
        text = client.get("/run/slow/fragments/conditions").text
        assert 'id="scores"' in text and "computing" not in text
    assert results_cache.computed == before + 1
    writer.close()


def _as_running(src: Path, dest: Path) -> tuple[RunStore, str]:
    """A copy of a finished run made to look mid-run: no results.json, status running, its last cell not done."""
    shutil.copytree(src, dest)
    (dest / "results.json").unlink()
    (dest / "report.html").unlink()
    writer = RunStore(dest)
    cell = queries.cells(writer)[-1].cell
    writer.execute("UPDATE runs SET status='running', finished_at=NULL")
    writer.execute("UPDATE cells SET status='running', budget_json=NULL WHERE cell=?", [cell])
    return writer, cell


def test_conditions_of_a_running_run(tmp_path: Path, runs_root: Path, page: Any) -> None:
    writer, cell = _as_running(runs_root / "arith-basics", tmp_path / "live")
    pending = queries.cells(writer)[-1]
    n_test = len([a for a in queries.attempt_scores(writer, cell, None) if a.phase == "test"])
    with Server([tmp_path / "live"]) as server:
        page.goto(server.url + "/run/live/conditions")
        assert "running" in page.locator("#conditions-live p").first.inner_text()
        results = _expected(tmp_path / "live")
        assert pending.condition not in {c["condition"] for c in results["conditions"]}
        _check(_shown(page), results)
        assert page.locator("#budgets tbody tr").count() == 2  # the running cell has stored no budget yet
        row = page.locator("#pending tbody tr")
        assert row.count() == 1 and cell in row.inner_text()
        assert row.locator("td").nth(4).inner_text().startswith(f"{n_test} (")
        before = results_cache.computed
        writer.finish_unit(cell, "viewer-live-test", {"done": True}, [
            AttemptRow(phase="test", task_id=f"new-{i}", version_id="v", answer="1", score=1.0, passed=True,
                       text="answer") for i in range(2)])
        page.wait_for_function(
            f"document.querySelector('#pending tbody tr td:nth-child(5)').innerText.startsWith('{n_test + 2} (')",
            timeout=15000)
        assert results_cache.computed > before  # the store moved: recomputed
    writer.close()


def test_conditions_of_a_run_with_no_cell_done(tmp_path: Path, runs_root: Path) -> None:
    writer, _ = _as_running(runs_root / "arith-basics", tmp_path / "early")
    writer.execute("UPDATE cells SET status='running', budget_json=NULL")
    writer.close()
    client = TestClient(create_app([tmp_path / "early"]))
    text = client.get("/run/early/conditions").text
    assert "No cell is done yet" in text and "3 cells not done yet" in text
