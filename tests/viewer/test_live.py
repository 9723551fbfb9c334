"""Pages of a running run refresh themselves: the tasks page and the ledger of a run whose status is `running` show
attempts and calls written after they were opened, with no reload; a finished run's pages do not poll."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from view_server import Server

from evoarena.store import AttemptRow, RunStore


def _running_copy(runs_root: Path, tmp_path: Path) -> tuple[Path, RunStore]:
    live = tmp_path / "live"
    shutil.copytree(runs_root / "arith-basics", live)
    writer = RunStore(live)
    row = writer.run()
    assert row is not None
    writer.update_run(row["id"], status="running", finished_at=None)
    return live, writer


def test_a_running_runs_tasks_and_ledger_refresh(tmp_path: Path, runs_root: Path, page: Any) -> None:
    live, writer = _running_copy(runs_root, tmp_path)
    cell = writer.cells()[0]["cell"]
    with Server([live]) as server:
        page.goto(server.url + "/run/live/tasks?phase=practice")
        assert page.locator("#live").count() == 1
        assert "live-task-x" not in page.inner_text("main")
        writer.finish_unit(cell, "viewer-live-tasks", {"done": True}, [
            AttemptRow(phase="practice", task_id="live-task-x", version_id="v", answer="42", score=1.0, passed=True,
                       text="42")])
        page.wait_for_function("document.querySelector('main').innerText.includes('live-task-x')", timeout=20000)

        page.goto(server.url + "/run/live/ledger")
        before = page.inner_text("main")
        call = writer.record_call(cell=cell, phase="practice", role="live-role", model="scripted",
                                  backend="scripted", model_id="scripted:x", params="{}", prompt_hash="h",
                                  cache_key="k", input_tokens=1, output_tokens=1, latency_s=0.0, cost_usd=0.0,
                                  cached=0, retries=0)
        assert "live-role" not in before
        page.wait_for_function("document.querySelector('main').innerText.includes('live-role')", timeout=20000)
        assert str(call) in page.inner_text("main")
    writer.close()


def test_a_finished_runs_pages_do_not_poll(viewer: Server, page: Any) -> None:
    for path in ("/run/arith-basics/tasks", "/run/arith-basics/ledger", "/run/arith-basics/curves",
                 "/run/arith-basics/lineage"):
        page.goto(viewer.url + path)
        assert page.locator("#live").count() == 0, path
