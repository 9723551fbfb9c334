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
    row = page.locator("#runs tr[data-run='arith-basics']")
    assert row.count() == 1
    assert "mechanism" in row.inner_text() and "finished" in row.inner_text()
    row.locator("a").first.click()
    page.wait_for_url("**/run/arith-basics")
    assert page.locator("#cells tbody tr").count() == len(RunStore(viewer.app.state.catalog.entry("arith-basics").path,
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
    shutil.copytree(runs_root / "arith-basics", live)
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


def test_runs_list_and_overview_show_results_json_scores(viewer: Server, runs_root: Path, page: Any) -> None:
    """Each condition's test score and its difference to the baseline, with CIs, are results.json's."""
    from evoarena.report.results_record import RESULTS_FILE, RunResults

    results = RunResults.read(runs_root / "arith-basics" / RESULTS_FILE)
    versus = {v.condition: v for v in results.versus_baseline}
    page.goto(viewer.url + "/")
    lines = page.locator("#runs tr[data-run='arith-basics'] .score-line")
    assert lines.count() == len(results.conditions) == 3
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # the scores wrap
    page.goto(viewer.url + "/run/arith-basics")
    rows = page.locator("#run-scores tbody tr")
    assert rows.count() == 3 and rows.first.get_attribute("data-condition") == "frozen"  # the baseline first
    for c in results.conditions:
        assert c.test is not None
        row = page.locator(f"#run-scores tr[data-condition='{c.condition}']")
        assert float(row.locator("td.test .score").get_attribute("data-mean")) == c.test.mean
        assert f"[{c.test.ci_low:.3f}, {c.test.ci_high:.3f}]" in row.locator("td.test").inner_text()
        v = versus[c.condition]
        if v.condition == v.baseline:
            assert row.locator("td.versus").inner_text() == "baseline"
        else:
            assert float(row.locator("td.versus .score").get_attribute("data-diff")) == v.diff
            assert f"[{v.ci_low:.3f}, {v.ci_high:.3f}]" in row.locator("td.versus").inner_text()
    page.goto(viewer.url + "/")
    for c in results.conditions:
        line = page.locator(f"#runs tr[data-run='arith-basics'] .score-line[data-condition='{c.condition}']")
        assert float(line.locator(".score").first.get_attribute("data-mean")) == c.test.mean  # type: ignore[union-attr]
        v = versus[c.condition]
        assert line.locator("[data-diff]").count() == (0 if v.condition == v.baseline else 1)
