"""Task text on the tasks grid and the trace, in Chromium: every row of the test grid shows the prompt the run stored,
which is the text the solver was asked (it appears in the attempt's call); a test task's reference is never shown (the
store keeps none), a train task's is, and a passed train attempt's answer equals it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from view_server import Server

from evoarena.store import RunStore
from evoarena.store.calls import conversation


def test_the_tasks_grid_and_the_trace_show_the_task_text(viewer: Server, runs_root: Path, page: Any) -> None:
    store = RunStore(runs_root / "arith-basics", read_only=True)
    tasks = {str(r["task_id"]): r for r in store.query("SELECT task_id, split, prompt, reference FROM tasks")}
    assert {str(r["split"]) for r in tasks.values()} == {"train", "val", "test"}
    assert all(r["reference"] is None for r in tasks.values() if r["split"] != "train")
    assert all(r["reference"] for r in tasks.values() if r["split"] == "train")
    page.goto(f"{viewer.url}/run/arith-basics/tasks")
    rows = page.locator("#tasks tbody tr")
    assert rows.count() == 40
    for i in range(rows.count()):
        row = rows.nth(i)
        task = tasks[row.get_attribute("data-task")]
        assert row.locator("pre.task-prompt").inner_text() == task["prompt"]
        assert row.locator(".task-reference").count() == 0
    assert "stays with the grader" in page.locator("main > p.muted").first.inner_text()
    first = rows.first.locator("a.attempt").first
    with page.expect_navigation():
        first.click()
    attempt = store.query_one("SELECT task_id, call_id FROM attempts WHERE id=?", [int(page.url.rsplit("/", 1)[1])])
    asked = conversation(store, int(attempt["call_id"]))
    assert asked is not None and tasks[attempt["task_id"]]["prompt"] in asked.messages[-1].content
    assert page.locator("#task-text pre.task-prompt").inner_text() == tasks[attempt["task_id"]]["prompt"]
    passed = store.query_one("SELECT id, task_id, answer FROM attempts WHERE phase='practice' AND passed=1 LIMIT 1")
    store.close()
    page.goto(f"{viewer.url}/run/arith-basics/attempt/{passed['id']}")
    assert page.locator("#task-text .task-reference code").inner_text() == tasks[passed["task_id"]]["reference"]
    assert str(passed["answer"]).strip() == tasks[passed["task_id"]]["reference"]
