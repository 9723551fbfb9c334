"""Model output is text, never markup: an answer and an execution output carrying script and event-handler payloads
are shown on the tasks and trace pages without running anything (the page's JavaScript state is checked in
Chromium), and htmx is configured to evaluate nothing it swaps in."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from view_server import Server

from evoarena.store import AttemptRow, RunStore

PAYLOAD = ('<script>window.__pwned = "script"</script><img src=x onerror="window.__pwned = \'img\'">'
           '<svg onload="window.__pwned = \'svg\'"></svg>')


def test_a_hostile_answer_is_shown_as_text(tmp_path: Path, runs_root: Path, page: Any) -> None:
    run = tmp_path / "hostile"
    shutil.copytree(runs_root / "arith-basics", run)
    writer = RunStore(run)
    cell = writer.cells()[0]["cell"]
    writer.finish_unit(cell, "hostile-unit", {"done": True}, [
        AttemptRow(phase="practice", task_id="hostile-task", version_id="v", answer=PAYLOAD, score=0.0,
                   passed=False, parse_error=PAYLOAD, text=PAYLOAD)])
    attempt = writer.query("SELECT id FROM attempts WHERE task_id = 'hostile-task'")[0]["id"]
    writer.close()
    with Server([run]) as server:
        for path in (f"/run/hostile/attempt/{attempt}", "/run/hostile/tasks?phase=practice"):
            page.goto(server.url + path)
            page.wait_for_timeout(300)
            assert page.evaluate("window.__pwned") is None, path
            assert "<script>window.__pwned" in page.inner_text("main"), path  # shown, as text
            assert page.locator("main script, main img[src='x'], main svg[onload]").count() == 0, path
        config = page.locator("meta[name='htmx-config']").get_attribute("content")
        assert '"allowEval": false' in config and '"allowScriptTags": false' in config
