"""Deferred ledger rows: written with their unit's attempts in one transaction, never before; dropped with a unit
that is redone; their ids handed out up front, unique beside rows written at once, and continued by a reopened
store; a unit's shared texts stored once; a new store's setup leaving the usual sync mode."""

from __future__ import annotations

from pathlib import Path

from evoarena.store import AttemptRow, RunStore, TextResponse, conversation
from evoarena.store.responses import ResponseTable

ROW = dict(role="solver", model="m", backend="scripted", model_id="scripted:m", params="{}", prompt_hash="h",
           cache_key="k", input_tokens=1, output_tokens=1, latency_s=0.0, cost_usd=0.0, cached=0, retries=0,
           error=None, phase="practice")


def _ids(store: RunStore) -> list[int]:
    return [r["id"] for r in store.query("SELECT id FROM calls ORDER BY id")]


def test_rows_wait_for_their_unit_and_land_with_its_attempts(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    a = store.defer_call(request=[("user", "q1")], response=TextResponse("a1"), cell="c", unit="u1", **ROW)
    now = store.record_call(request=[("user", "q0")], response=TextResponse("a0"), cell="c", unit="u1",
                            **{**ROW, "error": "boom"})
    b = store.defer_call(request=[("user", "q2")], response=TextResponse("a2"), cell="c", unit="u1", **ROW)
    assert a < now < b and _ids(store) == [now]  # the error row at once, the others wait
    row = AttemptRow(phase="practice", task_id="t", version_id="v", answer="x", score=1.0, passed=True, error=None,
                     parse_error=None, text="a2", call_id=b)
    store.finish_unit("c", "u1", {"ok": True}, [row])
    assert _ids(store) == [a, now, b]
    linked = store.query("SELECT a.call_id, c.unit FROM attempts a JOIN calls c ON c.id = a.call_id")
    assert linked == [{"call_id": b, "unit": "u1"}]
    assert store.get_text(store.query("SELECT response_blob FROM calls WHERE id = ?", [a])[0]["response_blob"])


def test_a_unit_redone_or_never_finished_leaves_no_row(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    store.defer_call(request=[("user", "q")], response=TextResponse("a"), cell="c", unit="u", **ROW)
    store.drop_unit_events("c", "u")  # the unit starts over
    store.finish_unit("c", "u", {}, [])
    assert _ids(store) == []
    store.defer_call(request=[("user", "q")], response=TextResponse("a"), cell="c", unit="v", **ROW)
    store.close()  # the process ends (a kill) before unit v finishes
    assert _ids(RunStore(tmp_path / "run")) == []


def test_a_reopened_store_continues_the_ids(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    first = store.record_call(request=[("user", "q")], response=TextResponse("a"), cell="c", unit="u", **ROW)
    store.defer_call(request=[("user", "q")], response=TextResponse("a"), cell="c", unit="lost", **ROW)
    store.close()
    again = RunStore(tmp_path / "run")
    nxt = again.record_call(request=[("user", "q")], response=TextResponse("a"), cell="c", unit="u", **ROW)
    assert nxt > first and _ids(again) == [first, nxt]


def test_a_units_shared_texts_are_stored_once_and_read_back_whole(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    system = "You solve arithmetic. " * 50
    ids = [store.defer_call(request=[("system", system), ("user", f"q{i}")], response=TextResponse("42"),
                            cell="c", unit="u", **ROW) for i in range(3)]
    store.finish_unit("c", "u", {}, [])
    # system once, q0..q2, three request lists, one shared response
    assert store.query_one("SELECT COUNT(*) AS n FROM texts") == {"n": 8}
    for i, call_id in enumerate(ids):
        conv = conversation(store, call_id)
        assert conv is not None and conv.response == TextResponse("42")
        assert [(m.role, m.content) for m in conv.messages or []] == [("system", system), ("user", f"q{i}")]


def test_a_new_store_syncs_its_commits_as_before(tmp_path: Path) -> None:
    """The schema is written without fsyncs; what follows is WAL with synchronous NORMAL (1), as it always was."""
    store = RunStore(tmp_path / "run")
    cache = ResponseTable(tmp_path / "cache.sqlite")
    for conn in (store._conn, cache._conn):
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1
