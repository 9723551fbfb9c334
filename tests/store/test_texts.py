"""Content-addressed texts in the run database, call rows written with their texts, and old-store migration."""

from __future__ import annotations

import hashlib
import sqlite3
import zlib
from pathlib import Path

import pytest

from evoarena.codec import to_plain
from evoarena.store import DB_NAME, AttemptRow, RunStore, TextMessage, TextResponse, conversation, find_calls
from evoarena.store.texts import get_response, get_text, put_response

ROW = dict(role="solver", model="m", backend="test", model_id="test:m", params="{}", prompt_hash="h", cache_key="k",
           input_tokens=1, output_tokens=2, latency_s=0.0, cost_usd=0.0, cached=0, retries=0)  # fmt: skip


def counts(store: RunStore) -> tuple[int, int]:
    row = store.query_one("SELECT (SELECT COUNT(*) FROM texts) AS t, (SELECT COUNT(*) FROM calls) AS c")
    assert row is not None
    return row["t"], row["c"]


def test_put_text_is_content_addressed_compressed_and_idempotent(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    text = "Grüße — " + "the same long system prompt. " * 200
    digest = store.put_text(text)
    assert digest == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert store.put_text(text) == digest and counts(store) == (1, 0)
    assert store.get_text(digest) == text
    row = store.query_one("SELECT size, body FROM texts WHERE digest=?", [digest])
    assert row is not None and row["size"] == len(text.encode("utf-8"))
    assert zlib.decompress(row["body"]).decode("utf-8") == text and len(row["body"]) < row["size"] / 10
    assert store.get_text(store.put_text("")) == ""
    with pytest.raises(KeyError):
        store.get_text("0" * 64)


def test_record_call_returns_its_id_and_shares_repeated_messages(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    system = "You are a careful solver. " * 100
    a = store.record_call(request=[("system", system), ("user", "q1")], response=TextResponse("a1", "stop"), **ROW)
    b = store.record_call(request=[("system", system), ("user", "q2")], response=TextResponse("a2", "length"), **ROW)
    assert (a, b) == (1, 2)
    # system once, q1, q2, two request lists, two responses
    assert counts(store) == (7, 2)
    conv = conversation(store, b)
    assert conv is not None and conv.kept
    assert conv.messages == [TextMessage("system", system), TextMessage("user", "q2")]
    assert conv.response == TextResponse("a2", "length", None)
    # the same request again (another sample, say) adds a row and no text
    store.record_call(request=[("system", system), ("user", "q2")], response=TextResponse("a2", "length"), **ROW)
    assert counts(store) == (7, 3)


def test_a_failed_insert_leaves_neither_row_nor_texts(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    with pytest.raises(sqlite3.Error):
        store.record_call(request=[("user", "lost")], response=TextResponse("gone"), **{**ROW, "no_such_column": 1})
    assert counts(store) == (0, 0)


def test_find_calls_filters_by_cell_prefix_role_phase_task_and_attempt(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    ids = {}
    for cell, role, phase, unit in [
        ("frozen__s0", "solver", "practice", "practice/e0/0000/t_1"),
        ("frozen__s0", "reflector", "practice", "practice/e0/0000/t_1"),
        ("frozen__s1", "solver", "practice", "practice/e0/0000/t_10"),
        ("frozen__s1", "solver", "test", "test/abc"),
    ]:
        ids[(cell, role, unit)] = store.record_call(
            cell=cell,
            phase=phase,
            unit=unit,
            request=[("user", unit)],
            response=TextResponse("x"),
            **{**ROW, "role": role},
        )
    test_call = ids[("frozen__s1", "solver", "test/abc")]
    store.finish_unit("frozen__s1", "test/abc", {}, [
        AttemptRow(phase="test", task_id="t_7", version_id="v", call_id=test_call),
        AttemptRow(phase="test", task_id="t_8", version_id="v"),
    ])  # fmt: skip

    def found(**kw: object) -> list[int]:
        return [c.id for c in find_calls(store, **kw)]  # type: ignore[arg-type]

    assert found(cell="frozen__s0") == [1, 2]
    assert found(cell="frozen") == [] and found(cell="frozen", cell_match="prefix") == [1, 2, 3, 4]
    assert found(cell="frozen__s1", cell_match="auto") == [3, 4]
    assert found(cell="frozen__", cell_match="auto") == [1, 2, 3, 4]
    assert found(role="reflector") == [2]
    assert found(phase="test") == [4]
    assert found(task="t_1") == [1, 2]  # unit keys name it; t_10 is another task
    assert found(task="t_7") == [test_call]  # linked through attempts.call_id
    assert found(task="t_8") == []
    attempt_ids = [r["id"] for r in store.query("SELECT id FROM attempts ORDER BY id")]
    assert found(attempt=attempt_ids[0]) == [test_call] and found(attempt=attempt_ids[1]) == []
    assert found(limit=2) == [3, 4]  # the last ones, oldest first
    assert found(cell="frozen__s0", role="solver", task="t_1", phase="practice") == [1]


OLD_SCHEMA = """
CREATE TABLE attempts (id INTEGER PRIMARY KEY AUTOINCREMENT, cell TEXT NOT NULL, phase TEXT NOT NULL,
  unit_key TEXT NOT NULL, task_id TEXT NOT NULL, version_id TEXT NOT NULL, answer TEXT, score REAL, passed INTEGER,
  error TEXT, parse_error TEXT, output_blob TEXT, created_at TEXT NOT NULL);
CREATE TABLE calls (id INTEGER PRIMARY KEY AUTOINCREMENT, cell TEXT, phase TEXT, role TEXT NOT NULL,
  model TEXT NOT NULL, backend TEXT NOT NULL, model_id TEXT NOT NULL, params TEXT NOT NULL, prompt_hash TEXT NOT NULL,
  cache_key TEXT NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, latency_s REAL NOT NULL,
  cost_usd REAL NOT NULL, cached INTEGER NOT NULL, retries INTEGER NOT NULL, error TEXT, created_at TEXT NOT NULL);
CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, cell TEXT, kind TEXT NOT NULL,
  payload TEXT NOT NULL);
INSERT INTO calls (cell, phase, role, model, backend, model_id, params, prompt_hash, cache_key, input_tokens,
  output_tokens, latency_s, cost_usd, cached, retries, error, created_at)
  VALUES ('c', 'practice', 'solver', 'm', 'test', 'test:m', '{}', 'h', 'k', 1, 2, 0.1, 0.0, 0, 0, NULL, 'then');
"""


def test_a_store_with_the_old_schema_gains_the_new_columns_and_its_old_calls_read_as_not_kept(tmp_path: Path) -> None:
    run_dir = tmp_path / "old"
    run_dir.mkdir()
    with sqlite3.connect(run_dir / DB_NAME) as conn:
        conn.executescript(OLD_SCHEMA)
    store = RunStore.open_existing(run_dir)

    def columns(table: str) -> set[str]:
        return {r["name"] for r in store.query(f"PRAGMA table_info({table})")}

    assert {"unit", "request_blob", "response_blob", "prompt_format"} <= columns("calls")
    assert "call_id" in columns("attempts") and "unit" in columns("events")
    assert {"digest", "size", "body"} == columns("texts")
    (old,) = find_calls(store)
    assert old.request_blob is None and old.unit is None and old.prompt_format is None
    conv = conversation(store, old.id)
    assert conv is not None and not conv.kept and conv.messages is None and conv.response is None
    new = store.record_call(request=[("user", "now")], response=TextResponse("kept"), **ROW)
    conv = conversation(store, new)
    assert conv is not None and conv.messages == [TextMessage("user", "now")]
    store.close()
    assert RunStore.open_existing(run_dir).query_one("SELECT COUNT(*) AS n FROM calls") == {"n": 2}  # reopens


def test_a_response_text_has_the_ledger_form(tmp_path: Path) -> None:
    """Compact sorted JSON; tool_calls only when the model made some, the other fields always (bytes of old runs)."""
    conn = sqlite3.connect(tmp_path / "t.sqlite")
    conn.execute("CREATE TABLE texts (digest TEXT PRIMARY KEY, size INTEGER, body BLOB)")
    plain = put_response(conn, TextResponse("é", None, [{"token": "é", "logprob": -0.5}], []))
    assert get_text(conn, plain) == '{"finish_reason":null,"logprobs":[{"logprob":-0.5,"token":"é"}],"text":"é"}'
    call = [{"id": "c1", "name": "f", "arguments": "{}"}]
    called = put_response(conn, TextResponse("", "tool_calls", None, call))
    assert get_text(conn, called) == ('{"finish_reason":"tool_calls","logprobs":null,"text":"",'
                                      '"tool_calls":[{"arguments":"{}","id":"c1","name":"f"}]}')
    assert get_response(conn, called) == TextResponse("", "tool_calls", None, call)
    assert to_plain(TextMessage("tool", "x", tool_call_id="c1")) == {"role": "tool", "content": "x",
                                                                      "tool_call_id": "c1"}
