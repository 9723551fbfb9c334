"""The ledger page in a real browser: filters (role, cell, cached) narrowing to the store's counts and totals,
keyset paging that walks every matching call once, a row opening its call page; and 100k calls opening in under
2 s at any depth."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from big_run import make_big_run
from starlette.testclient import TestClient
from view_server import Server

from evoarena.store import RunStore
from evoarena.store.calls import conversation
from evoarena.viewer import create_app


@pytest.fixture(scope="module")
def store(viewer: Server) -> Iterator[RunStore]:
    s = RunStore(viewer.app.state.catalog.entry("arith-basics").path, read_only=True)
    yield s
    s.close()


def shown_ids(page: Any) -> list[int]:
    return [int(x) for x in page.locator("#ledger tbody tr").evaluate_all("rs => rs.map(r => r.dataset.call)")]


def test_the_ledger_filters_by_role(viewer: Server, store: RunStore, page: Any, shoot: Any) -> None:
    page.goto(viewer.url + "/run/arith-basics")
    page.locator("nav.pages a", has_text="ledger").click()
    page.wait_for_url("**/run/arith-basics/ledger")
    total = store.query_one("SELECT COUNT(*) AS n, SUM(input_tokens) AS i FROM calls")
    assert total is not None and total["n"] > 100
    assert int(page.locator("#ledger-totals b").get_attribute("data-calls")) == total["n"]
    assert shown_ids(page) == [r["id"] for r in store.query("SELECT id FROM calls ORDER BY id DESC LIMIT 100")]
    page.goto(viewer.url + "/run/arith-basics/ledger?size=25")  # the picture: a page of 25
    assert len(shown_ids(page)) == 25
    shoot(page, "ledger")

    page.select_option("#f-role", "reflector")
    page.wait_for_url("**role=reflector**")
    reflector = store.query("SELECT id, input_tokens FROM calls WHERE role = 'reflector' ORDER BY id DESC")
    assert len(reflector) > 0
    assert shown_ids(page) == [r["id"] for r in reflector]
    assert set(page.locator("#ledger tbody tr").evaluate_all("rs => rs.map(r => r.dataset.role)")) == {"reflector"}
    assert int(page.locator("#ledger-totals b").get_attribute("data-calls")) == len(reflector)
    assert f"{sum(r['input_tokens'] for r in reflector):,} tokens in" in page.locator("#ledger-totals").inner_text()

    page.locator("#ledger tbody tr a").first.click()
    page.wait_for_url(f"**/call/{reflector[0]['id']}")
    conv = conversation(store, reflector[0]["id"])
    assert conv is not None and conv.messages
    assert [m.text_content() for m in page.locator(".conversation .message:not(.response) pre.msg").all()] == \
        [m.content for m in conv.messages]


def test_filters_combine_and_paging_walks_every_call(viewer: Server, store: RunStore, page: Any) -> None:
    cell = store.query_one("SELECT cell FROM cells WHERE condition = 'reflexion'")
    assert cell is not None
    page.goto(viewer.url + f"/run/arith-basics/ledger?size=20&cell={cell['cell']}")
    page.select_option("#f-cached", "no")
    page.wait_for_url("**cached=no**")
    want = [r["id"] for r in store.query("SELECT id FROM calls WHERE cell = ? AND cached = 0 ORDER BY id DESC",
                                         [cell["cell"]])]
    assert len(want) > 40  # three pages at least
    assert int(page.locator("#ledger-totals b").get_attribute("data-calls")) == len(want)
    seen = shown_ids(page)
    while page.locator(".pager a.older").count():
        page.locator(".pager a.older").first.click()
        page.wait_for_url(f"**before={seen[-1]}**")
        seen += shown_ids(page)
    assert seen == want
    last = (len(want) - 1) // 20 * 20  # where the last page starts
    page.locator(".pager a.newer").first.click()
    page.wait_for_url(f"**after={want[last]}**")
    assert shown_ids(page) == want[last - 20:last]


def test_an_unknown_filter_value_shows_no_calls(viewer: Server) -> None:
    r = TestClient(viewer.app).get("/run/arith-basics/ledger?role=nobody&before=abc&cached=maybe")
    assert r.status_code == 200 and "No calls match" in r.text and 'data-calls="0"' in r.text


def test_a_hundred_thousand_calls_open_in_under_two_seconds(tmp_path: Path) -> None:
    big = make_big_run(tmp_path / "big", tasks=10)
    client = TestClient(create_app([big]))
    for url in ("/run/big/ledger", "/run/big/ledger?before=500", "/run/big/ledger?role=reflector",
                "/run/big/ledger?cell=b__m__s1&phase=practice&before=60000", "/run/big/ledger?after=99950",
                "/run/big/call/50000"):
        start = time.monotonic()
        r = client.get(url)
        took = time.monotonic() - start
        assert r.status_code == 200, url
        assert took < 2.0, f"{url} took {took:.2f} s"
    assert 'data-calls="100000"' in client.get("/run/big/ledger").text
    assert client.get("/run/big/ledger").text.count("<tr data-call") == 100
