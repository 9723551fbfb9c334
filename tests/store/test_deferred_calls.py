"""Deferred ledger rows: written with their unit's attempts in one transaction, never before; dropped with a unit
that is redone; their ids handed out up front, unique beside rows written at once, and continued by a reopened
store."""

from __future__ import annotations

from pathlib import Path

from evoarena.store import AttemptRow, RunStore, TextResponse

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
