"""The trace pages in a real browser: an attempt's grader feedback, answer, execution output, harness version link
and the exact messages of its stored call; a ledger call's page; an episode of a scripted maze run step by step; and
404s for what the store does not hold."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from view_server import Server

from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import parse_spec
from evoarena.store import RunStore
from evoarena.store.calls import attempt_conversation, conversation

MAZE = {"name": "maze-trace", "benchmark": {"name": "maze", "params": {"seed": 0, "n_train": 1, "n_val": 0,
                                                                        "n_test": 2, "size": 5, "max_steps": 20}},
        "methods": [{"name": "frozen"}], "models": {"s": {"backend": "scripted", "model": "maze-explorer"}},
        "roles": {"solver": "s"}, "seeds": [0], "protocol": {"epochs": 1}}


@pytest.fixture(scope="module")
def store(viewer: Server) -> Iterator[RunStore]:
    s = RunStore(viewer.app.state.catalog.entry("arith-basics").path, read_only=True)
    yield s
    s.close()


def messages_shown(page: Any) -> list[str | None]:
    return [m.text_content() for m in page.locator(".conversation .message:not(.response) pre.msg").all()]


def test_an_attempts_trace_shows_its_exact_conversation(viewer: Server, store: RunStore, page: Any,
                                                        shoot: Any) -> None:
    """A reflexion practice attempt whose unit also holds a reflector call: the attempt's facts, its call's exact
    messages and response, and the unit's other calls, one of them opened."""
    a = store.query_one("SELECT a.* FROM attempts a JOIN calls c ON c.cell = a.cell AND c.unit = a.unit_key"
                        " WHERE c.role = 'reflector' AND a.call_id IS NOT NULL ORDER BY a.id DESC LIMIT 1")
    assert a is not None
    page.goto(f"{viewer.url}/run/arith-basics/attempt/{a['id']}")
    conv = attempt_conversation(store, a["id"])
    assert conv is not None and conv.messages and conv.response is not None
    assert messages_shown(page) == [m.content for m in conv.messages]
    assert page.locator(f"#response-{conv.call.id}").text_content() == conv.response.text
    assert page.locator("#answer").text_content() == a["answer"]
    assert page.locator("#output").text_content() == store.blobs.get_text(a["output_blob"])
    assert page.locator("#grade-score").inner_text() == f"{a['score']:.3f}"
    assert page.locator("#grade-passed").inner_text() == ("yes" if a["passed"] else "no")
    assert page.locator("#version-link").get_attribute("href") == \
        f"/run/arith-basics/version/{a['cell']}/{a['version_id']}"
    shoot(page, "trace")

    unit = store.query("SELECT id, role FROM calls WHERE cell = ? AND unit = ? ORDER BY id", [a["cell"], a["unit_key"]])
    assert [int(t) for t in page.locator("#unit-calls tbody tr td:first-child").all_inner_texts()] == \
        [r["id"] for r in unit]
    reflector = next(r["id"] for r in unit if r["role"] == "reflector")
    page.locator("#unit-calls a", has_text=str(reflector)).first.click()
    page.wait_for_url(f"**/run/arith-basics/call/{reflector}")
    rconv = conversation(store, reflector)
    assert rconv is not None and rconv.messages and rconv.response is not None
    assert messages_shown(page) == [m.content for m in rconv.messages]
    assert page.locator(f"#response-{reflector}").text_content() == rconv.response.text
    assert "reflector" in page.locator("h1").inner_text()
    shoot(page, "call")


def test_a_call_page_links_its_attempt_and_neighbours(viewer: Server, store: RunStore, page: Any) -> None:
    a = store.query_one("SELECT id, call_id FROM attempts WHERE phase = 'test' AND call_id IS NOT NULL LIMIT 1")
    assert a is not None
    page.goto(f"{viewer.url}/run/arith-basics/call/{a['call_id']}")
    assert str(a["id"]) in page.locator("#call a.attempt").all_inner_texts()
    page.locator("#next-call").click()
    page.wait_for_url(f"**/call/{a['call_id'] + 1}")
    page.locator("#call a.attempt").first.click()
    page.wait_for_url("**/attempt/*")
    assert page.locator("#call-link").inner_text() == str(a["call_id"] + 1)


@pytest.fixture(scope="module")
def maze_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("view-maze")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVOARENA_CACHE_DIR", str(root / "cache"))
        run_experiment(parse_spec(MAZE), root / "maze", probe=False)
    return root / "maze"


def test_an_episode_is_shown_step_by_step(maze_run: Path, page: Any, shoot: Any) -> None:
    store = RunStore(maze_run, read_only=True)
    a = store.query_one("SELECT id, answer FROM attempts WHERE phase = 'test' ORDER BY id LIMIT 1")
    assert a is not None
    steps = json.loads(a["answer"])["trace"]
    assert len(steps) > 1
    with Server([maze_run]) as server:
        page.goto(f"{server.url}/run/maze/attempt/{a['id']}")
        rows = page.locator("#episode tbody tr.step")
        assert rows.count() == len(steps)
        for i, s in enumerate(steps):
            cells = rows.nth(i).locator("td").all_inner_texts()
            assert cells[0] == str(s["step"]) and cells[3] == s["action"] and cells[5] == s["observation"]
            conv = conversation(store, s["call_id"])
            assert conv is not None and conv.response is not None
            assert cells[2] == conv.response.text.strip()[:120]
        shoot(page, "trace-episode")
        rows.nth(1).locator("a").click()
        page.wait_for_url(f"**/call/{steps[1]['call_id']}")
    store.close()


def test_unknown_attempts_and_calls_are_404(viewer: Server) -> None:
    client = TestClient(viewer.app)
    for url in ("/run/arith-basics/attempt/999999", "/run/arith-basics/call/999999", "/run/arith-basics/attempt/x",
                "/run/arith-basics/call/-1", "/run/nope/attempt/1"):
        r = client.get(url)
        assert r.status_code == 404, url
    assert "no attempt 999999" in client.get("/run/arith-basics/attempt/999999").text
