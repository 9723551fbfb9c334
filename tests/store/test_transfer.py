"""Moving a cell's rows between stores (what a Ray worker sends its driver): ledger rows renumbered into the receiving
store, a row written ahead and completed later landing as one row, attempts pointing at the renumbered call, blobs
checked against their digests, and a seed carrying what a cell needs to resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from evoarena.harness import Manifest, load_tree, save_version
from evoarena.store import AttemptRow, RunStore, TextResponse
from evoarena.store.transfer import CallIds, Rows, absorb, call_rows, drop_call, seed_rows, unit_rows

ROW = dict(role="solver", model="m", backend="openai", model_id="openai:m", params="{}", prompt_hash="h",
           cache_key="k", input_tokens=0, output_tokens=0, latency_s=0.0, cost_usd=0.0, cached=0, retries=0,
           error=None, phase="practice", cell="c")


def _attempt(call_id: int) -> AttemptRow:
    return AttemptRow(phase="practice", task_id="t", version_id="v", answer="x", score=1.0, passed=True, error=None,
                      parse_error=None, text="the output", call_id=call_id)


def test_a_units_rows_land_renumbered_and_linked(tmp_path: Path) -> None:
    worker, driver = RunStore(tmp_path / "w"), RunStore(tmp_path / "d")
    driver.record_call(request=[("user", "driver's own")], response=TextResponse("x"), **{**ROW, "cell": None})
    ids = CallIds()
    ahead = worker.record_call(request=[("system", "sys"), ("user", "q")], unit="u", **ROW)
    absorb(driver, call_rows(worker, [ahead]), ids)  # sent when written ahead of the call
    worker.finish_call(ahead, response=TextResponse("a"), output_tokens=3)
    absorb(driver, call_rows(worker, [ahead]), ids)  # and again when it returned
    hit = worker.defer_call(request=[("user", "q2")], response=TextResponse("b"), unit="u", **{**ROW, "cached": 1})
    vid = save_version(worker, "c", {"prompt.md": "hi"}, parents=[], method="m", manifest=Manifest(intent="i"),
                       step="u")
    worker.event("note", {"n": 1}, cell="c", unit="u")
    worker.finish_unit("c", "u", {"version": vid}, [_attempt(ahead), _attempt(hit)])
    absorb(driver, unit_rows(worker, "c", "u"), ids)

    calls = driver.query("SELECT id, output_tokens, cached, request_blob, response_blob FROM calls WHERE cell='c'"
                         " ORDER BY id")
    assert [c["output_tokens"] for c in calls] == [3, 0] and [c["cached"] for c in calls] == [0, 1]
    assert calls[0]["id"] == 2 and ids.ids == {ahead: 2, hit: 3}  # after the driver's own row, one row per call
    assert [m.content for m in driver.get_request(calls[0]["request_blob"])] == ["sys", "q"]
    assert driver.get_response(calls[1]["response_blob"]).text == "b"
    linked = driver.query("SELECT call_id, output_blob FROM attempts ORDER BY id")
    assert [a["call_id"] for a in linked] == [2, 3]
    assert driver.blobs.get_text(linked[0]["output_blob"]) == "the output"
    assert load_tree(driver, vid) == {"prompt.md": "hi"}
    assert driver.unit_result("c", "u") == {"version": vid}
    assert driver.query("SELECT kind, unit FROM events") == [{"kind": "note", "unit": "u"}]


def test_a_call_dropped_by_the_worker_is_dropped_by_the_driver(tmp_path: Path) -> None:
    worker, driver = RunStore(tmp_path / "w"), RunStore(tmp_path / "d")
    ids = CallIds()
    ahead = worker.record_call(request=[("user", "q")], unit="u", **ROW)
    absorb(driver, call_rows(worker, [ahead]), ids)
    assert len(driver.query("SELECT id FROM calls")) == 1
    drop_call(driver, ahead, ids)
    assert driver.query("SELECT id FROM calls") == []


def test_a_blob_that_does_not_match_its_digest_is_refused(tmp_path: Path) -> None:
    driver = RunStore(tmp_path / "d")
    with pytest.raises(ValueError, match="does not match"):
        absorb(driver, Rows(blobs={"0" * 64: b"something else"}), CallIds())


def test_a_seed_lets_a_cell_resume_elsewhere(tmp_path: Path) -> None:
    driver, worker = RunStore(tmp_path / "d"), RunStore(tmp_path / "w")
    driver.upsert_cell("c", condition="x", method="m", model="s", seed=0, status="running")
    vid = save_version(driver, "c", {"a.md": "1"}, parents=[], method="m", manifest=Manifest(intent="i"), step="init")
    driver.finish_unit("c", "init", {"version": vid}, [])
    driver.finish_unit("other", "init", {"version": "zzz"}, [])
    absorb(worker, seed_rows(driver, "c"), CallIds())
    assert worker.unit_result("c", "init") == {"version": vid}
    assert worker.unit_result("other", "init") is None  # only the cell's own rows
    assert load_tree(worker, vid) == {"a.md": "1"}
    assert worker.cells()[0]["status"] == "running"


def test_a_conversation_with_tool_calls_lands_whole(tmp_path: Path) -> None:
    """A request whose messages carry tool calls and results (function calling) travels with every message text."""
    worker, driver = RunStore(tmp_path / "w"), RunStore(tmp_path / "d")
    call = {"id": "c1", "name": "read", "arguments": '{"path": "a"}'}
    request = [["user", "read a"], ["assistant", "", {"tool_calls": [call]}], ["tool", "alpha", {"tool_call_id": "c1"}]]
    sent = worker.record_call(request=request, response=TextResponse("done", tool_calls=[call]), unit="u", **ROW)
    absorb(driver, call_rows(worker, [sent]), CallIds())
    (row,) = driver.query("SELECT request_blob, response_blob FROM calls")
    messages = driver.get_request(row["request_blob"])
    assert [(m.role, m.content, m.tool_call_id) for m in messages] == [
        ("user", "read a", None), ("assistant", "", None), ("tool", "alpha", "c1")]
    assert messages[1].tool_calls == [call] and driver.get_response(row["response_blob"]).tool_calls == [call]
