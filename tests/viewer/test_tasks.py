"""The tasks page in a real browser: a phase's tasks × conditions with the store's seed-averaged scores, paged in
SQL, the phase select and the "conditions disagree" filter, an answer opening its attempt's trace; and the page of
a 10k-task run opening in under 2 s."""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from big_run import make_big_run
from starlette.testclient import TestClient
from view_server import Server

from evoarena.store import RunStore
from evoarena.store.calls import attempt_conversation
from evoarena.viewer import create_app


@pytest.fixture(scope="module")
def store(viewer: Server) -> Any:
    s = RunStore(viewer.app.state.catalog.entry("arith-basics").path, read_only=True)
    yield s
    s.close()


def means(store: RunStore, phase: str) -> dict[str, dict[str, float]]:
    """task → condition → mean score, straight from the store."""
    rows = store.query("SELECT a.task_id, c.condition, a.score FROM attempts a JOIN cells c ON c.cell = a.cell"
                       " WHERE a.phase = ? AND a.score IS NOT NULL", [phase])
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        acc[r["task_id"]][r["condition"]].append(float(r["score"]))
    return {t: {c: sum(v) / len(v) for c, v in by.items()} for t, by in acc.items()}


def shown_scores(page: Any) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for row in page.locator("#tasks tbody tr").all():
        task = row.get_attribute("data-task")
        out[task] = {td.get_attribute("data-condition"): float(td.get_attribute("data-score"))
                     for td in row.locator("td.score").all()}
    return out


def test_the_tasks_table_shows_the_stores_scores(viewer: Server, store: RunStore, page: Any, shoot: Any) -> None:
    page.goto(viewer.url + "/run/arith-basics")
    page.locator("nav.pages a", has_text="tasks").click()
    page.wait_for_url("**/run/arith-basics/tasks")
    expected = means(store, "test")
    assert page.locator("#tasks tbody tr").count() == min(50, len(expected)) > 0
    shown = shown_scores(page)
    assert shown.keys() <= expected.keys()
    for task, by in shown.items():
        assert by == pytest.approx(expected[task], abs=1e-6), task
    assert [h.inner_text() for h in page.locator("#tasks thead tr").first.locator("th").all()][1:] == \
        ["frozen", "reflexion", "bootstrap_fewshot"]
    shoot(page, "tasks")

    link = page.locator("#tasks td.answer a.attempt").nth(3)
    attempt_id = int(link.get_attribute("href").rsplit("/", 1)[1])
    link.click()
    page.wait_for_url(f"**/run/arith-basics/attempt/{attempt_id}")
    conv = attempt_conversation(store, attempt_id)
    assert conv is not None and conv.messages
    shown_messages = page.locator(".conversation .message:not(.response) pre.msg")
    assert shown_messages.count() == len(conv.messages)
    for i, m in enumerate(conv.messages):
        assert shown_messages.nth(i).text_content() == m.content


def test_the_phase_select_and_the_disagree_filter(viewer: Server, store: RunStore, page: Any) -> None:
    page.goto(viewer.url + "/run/arith-basics/tasks")
    page.select_option("#phase", "select")
    page.wait_for_url("**phase=select**")
    expected = means(store, "select")
    assert page.locator("#tasks tbody tr").count() == len(expected)
    assert shown_scores(page) == {t: pytest.approx(v, abs=1e-6) for t, v in expected.items()}
    # select: every candidate version's attempt is averaged, and n says how many
    n = store.query_one("SELECT COUNT(*) AS n FROM attempts a JOIN cells c ON c.cell = a.cell WHERE a.phase='select'"
                        " AND c.condition='reflexion' AND a.task_id=?", [sorted(expected)[0]])
    first = page.locator("#tasks tbody tr").first.locator("td.score[data-condition='reflexion']")
    assert int(first.get_attribute("data-n")) == n["n"] > 1

    page.select_option("#phase", "test")
    page.check("#disagree")
    page.wait_for_url("**disagree=1**")
    test = means(store, "test")
    differ = sorted(t for t, by in test.items() if max(by.values()) - min(by.values()) > 1e-9)
    assert 0 < len(differ) < len(test)
    assert [r.get_attribute("data-task") for r in page.locator("#tasks tbody tr").all()] == differ[:50]


def test_paging_goes_through_every_task_once(viewer: Server, store: RunStore, page: Any) -> None:
    tasks = sorted(means(store, "test"))
    page.goto(viewer.url + "/run/arith-basics/tasks?size=15")
    seen: list[str] = []
    for n in range(1, 4):
        assert f"page {n} of 3" in page.locator(".pager").first.inner_text()
        seen += [r.get_attribute("data-task") for r in page.locator("#tasks tbody tr").all()]
        if n < 3:
            page.locator(".pager a.next").first.click()
            page.wait_for_url(f"**page={n + 1}**")
    assert seen == tasks
    page.locator(".pager a.prev").first.click()
    page.wait_for_url("**page=2**")
    assert page.locator("#tasks tbody tr").first.get_attribute("data-task") == tasks[15]


def test_an_empty_phase_and_a_page_past_the_end(viewer: Server) -> None:
    client = TestClient(viewer.app)
    r = client.get("/run/arith-basics/tasks?phase=rollout")
    assert r.status_code == 200 and "No rollout attempts" in r.text
    r = client.get("/run/arith-basics/tasks?page=99")
    assert r.status_code == 200 and "<tr data-task" not in r.text


def test_ten_thousand_tasks_open_in_under_two_seconds(tmp_path: Path) -> None:
    big = make_big_run(tmp_path / "big", calls=10)
    client = TestClient(create_app([big]))
    for url in ("/run/big/tasks", "/run/big/tasks?page=200", "/run/big/tasks?disagree=1&page=50"):
        start = time.monotonic()
        r = client.get(url)
        took = time.monotonic() - start
        assert r.status_code == 200 and r.text.count("<tr data-task") == 50, url
        assert took < 2.0, f"{url} took {took:.2f} s"
    assert "page 200 of 200" in client.get("/run/big/tasks?page=200").text
