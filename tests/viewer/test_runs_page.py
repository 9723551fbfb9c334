"""The runs page and a run's overview, in a real browser: every run listed with its evidence and cost, the run's
cells and calls by role, and a live run's new attempts shown without a reload."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from view_server import Server

from evoarena.store import AttemptRow, RunStore


def test_the_runs_page_lists_the_run(viewer: Server, page: Any, shoot: Any) -> None:
    page.goto(viewer.url + "/")
    shoot(page, "runs")
    row = page.locator("#runs tr[data-run='quickstart']")
    assert row.count() == 1
    assert "mechanism" in row.inner_text() and "finished" in row.inner_text()
    row.locator("a").first.click()
    page.wait_for_url("**/run/quickstart")
    assert page.locator("#cells tbody tr").count() == len(RunStore(viewer.app.state.catalog.entry("quickstart").path,
                                                                   read_only=True).cells())
    assert "solver" in page.locator("#roles").inner_text()
    shoot(page, "run")


def test_an_unknown_run_is_a_404_page(viewer: Server, page: Any) -> None:
    response = page.goto(viewer.url + "/run/no-such-run")
    assert response.status == 404 and "no run named 'no-such-run'" in page.inner_text("main")


def test_a_live_runs_new_attempts_appear(tmp_path: Path, runs_root: Path, page: Any) -> None:
    """The viewer reads the store read-only beside its writer: attempts a run records while the page is open show up
    in it within a few seconds, with no reload."""
    import shutil

    live = tmp_path / "live"
    shutil.copytree(runs_root / "quickstart", live)
    writer = RunStore(live)
    cell = writer.cells()[0]["cell"]
    with Server([live]) as server:
        page.goto(server.url + "/run/live")
        before = int(page.locator("#attempt-count").inner_text())
        writer.finish_unit(cell, "viewer-live-test", {"done": True}, [
            AttemptRow(phase="practice", task_id=f"t{i}", version_id="v", answer="1", score=1.0, passed=True,
                       text="answer") for i in range(3)])
        page.wait_for_function(f"document.querySelector('#attempt-count').innerText == '{before + 3}'", timeout=15000)
    writer.close()
