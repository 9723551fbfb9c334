"""Every call through a RoleModel keeps its exact messages and response, linked from its ledger row."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from evoarena.models import (
    CallScope,
    Completion,
    GenParams,
    Message,
    ModelCallError,
    ProviderError,
    ResponseCache,
    RoleModel,
    TokenLogprob,
    Usage,
)
from evoarena.spec import ModelSpec
from evoarena.store import RunStore, TextMessage, TextResponse, conversation

SYSTEM = "You answer arithmetic questions with one number.\n" * 50


class EchoBackend:
    """Answers `re: <last message>` with per-token logprobs; fails while `failing` is set."""

    backend_name = "test"
    model_id = "test:echo"
    endpoint = "echo"

    def __init__(self) -> None:
        self.calls = 0
        self.failing = False

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion:
        self.calls += 1
        if self.failing:
            raise ProviderError("HTTP 500 down", retryable=False, status=500)
        text = f"re: {messages[-1].content}"
        lps = (TokenLogprob("re", -0.25), TokenLogprob(":", -1.5)) if params.logprobs else None
        return Completion(text=text, usage=Usage(7, 2), logprobs=lps, finish_reason="stop")


def make(tmp_path: Path) -> tuple[RoleModel, RunStore, EchoBackend]:
    store = RunStore(tmp_path / "run")
    backend = EchoBackend()
    model = RoleModel(
        role="solver",
        model_name="m",
        backend=backend,
        spec=ModelSpec(backend="openai", base_url="http://127.0.0.1:1/v1", max_retries=0),
        store=store,
        cache=ResponseCache(tmp_path / "cache.sqlite"),
        backoff_base_s=0.001,
    )
    return model.scoped(CallScope(cell="c", phase="practice", unit="practice/e0/0000/t1")), store, backend


def n_texts(store: RunStore) -> int:
    row = store.query_one("SELECT COUNT(*) AS n FROM texts")
    return int(row["n"]) if row else 0


def test_a_calls_exact_messages_and_response_round_trip_and_call_id_is_its_row(tmp_path: Path) -> None:
    model, store, _ = make(tmp_path)
    msgs = [Message("system", SYSTEM), Message("user", "2 + 2 = ?\n\ttabs, 'quotes' \"and\" ünïcode ✓")]
    got = model.complete(msgs, GenParams(logprobs=True, max_tokens=9))
    (row,) = store.query("SELECT id, request_blob, response_blob, unit FROM calls")
    assert got.call_id == row["id"] and row["request_blob"] and row["response_blob"]
    conv = conversation(store, row["id"])
    assert conv is not None
    assert conv.messages == [TextMessage(m.role, m.content) for m in msgs]
    assert conv.response == TextResponse(
        got.text, "stop", [{"token": "re", "logprob": -0.25}, {"token": ":", "logprob": -1.5}]
    )
    assert conv.call.params["max_tokens"] == 9 and conv.call.unit == "practice/e0/0000/t1"
    assert "call_id" not in got.ledger_form()  # never cached


def test_two_calls_sharing_a_system_prompt_store_it_once(tmp_path: Path) -> None:
    model, store, _ = make(tmp_path)
    model.complete([Message("system", SYSTEM), Message("user", "q1")])
    assert n_texts(store) == 4  # system, q1, request list, response
    model.complete([Message("system", SYSTEM), Message("user", "q2")])
    assert n_texts(store) == 7  # + q2, request list, response: the system prompt is not stored again
    rows = store.query("SELECT size FROM texts WHERE size >= ?", [len(SYSTEM)])
    assert len(rows) == 1


def test_a_cached_call_keeps_its_request_and_points_at_the_same_response(tmp_path: Path) -> None:
    model, store, backend = make(tmp_path)
    msgs = [Message("system", SYSTEM), Message("user", "q")]
    first = model.complete(msgs)
    before = n_texts(store)
    second = model.complete(msgs)
    assert backend.calls == 1 and first == second and (first.call_id, second.call_id) == (1, 2)
    rows = store.query("SELECT cached, request_blob, response_blob FROM calls ORDER BY id")
    assert [r["cached"] for r in rows] == [0, 1]
    assert rows[0]["request_blob"] == rows[1]["request_blob"] and rows[0]["response_blob"] == rows[1]["response_blob"]
    assert n_texts(store) == before
    conv = conversation(store, 2)
    assert conv is not None and conv.messages is not None and conv.messages[1].content == "q"
    assert conv.response is not None and conv.response.text == first.text


def test_a_provider_error_keeps_the_request_and_no_response(tmp_path: Path) -> None:
    model, store, backend = make(tmp_path)
    backend.failing = True
    with pytest.raises(ModelCallError):
        model.complete([Message("user", "will fail")])
    (row,) = store.query("SELECT id, error, request_blob, response_blob FROM calls")
    assert "500" in row["error"] and row["request_blob"] is not None and row["response_blob"] is None
    conv = conversation(store, row["id"])
    assert conv is not None and conv.messages == [TextMessage("user", "will fail")] and conv.response is None
