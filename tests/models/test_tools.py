"""Function calling in the model layer: tools in the params, tool calls in completions and messages — each in the
cache key, the cache entry and the ledger only when present, so calls without tools key, cache and record exactly as
before tools existed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from evoarena.codec import to_plain
from evoarena.models import (
    CallScope,
    Completion,
    GenParams,
    Message,
    PolicyReply,
    ResponseCache,
    RoleModel,
    ScriptedBackend,
    Tool,
    ToolCall,
    Usage,
    cache_key,
    calls_tools,
    prompt_hash,
)
from evoarena.spec import ModelSpec, SpecError, parse_spec
from evoarena.store import RunStore, TextMessage, conversation

MSGS = [Message("system", "You are terse."), Message("user", "Say hi.")]
PARAMS = GenParams(temperature=0.7, max_tokens=12, stop=("Q:",), seed=3)
READ = Tool("read", "Read a file.",
            {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
# computed with the code before tools existed (commit dc53620): a call without tools must keep its key
PINNED_PROMPT_HASH = "7e2bba8f29a848f44c3e0642e5cc6074f5ab15332ebef510f08b8df1d41a8e44"
PINNED_CACHE_KEY = "640067a60bf76c33ff5837e28430b19cebb7a03f498c1317fea8853880980dc5"


def test_without_tools_the_cache_key_is_what_it_was() -> None:
    assert prompt_hash(MSGS) == PINNED_PROMPT_HASH
    assert cache_key("openai:stub-model", PARAMS, MSGS, 1) == PINNED_CACHE_KEY
    assert "tools" not in PARAMS.ledger_form() and "tool_choice" not in PARAMS.ledger_form()


def test_tools_and_tool_messages_change_the_key() -> None:
    with_tools = GenParams(**{**PARAMS.__dict__, "tools": (READ,)})
    forced = GenParams(**{**PARAMS.__dict__, "tools": (READ,), "tool_choice": "read"})
    other = Tool("read", "Read one file.", READ.parameters)
    keys = {cache_key("openai:stub-model", p, MSGS, 1) for p in (PARAMS, with_tools, forced,
                                                               GenParams(**{**PARAMS.__dict__, "tools": (other,)}))}
    assert len(keys) == 4 and PINNED_CACHE_KEY in keys
    call = ToolCall("c1", "read", '{"path": "a"}')
    chat = [*MSGS, Message("assistant", "", tool_calls=(call,)), Message("tool", "alpha", tool_call_id="c1")]
    assert prompt_hash(chat) != prompt_hash([*MSGS, Message("assistant", ""), Message("tool", "alpha")])


def test_params_and_messages_round_trip_through_their_json_forms() -> None:
    forced = GenParams(max_tokens=5, tools=(READ,), tool_choice="read")
    assert GenParams.from_ledger_form(json.loads(json.dumps(forced.ledger_form()))) == forced
    assert GenParams.from_ledger_form(PARAMS.ledger_form()) == PARAMS
    call = ToolCall("c1", "read", '{"path": "a"}')
    for m in (Message("user", "x"), Message("assistant", "", tool_calls=(call,)),
              Message("tool", "out", tool_call_id="c1")):
        assert Message.from_ledger_form(json.loads(json.dumps(m.ledger_form()))) == m
    assert Message("user", "x").ledger_form() == ["user", "x"]
    with pytest.raises(TypeError):
        Message.from_ledger_form(["tool", "out", {"tool_call_id": 7}])
    with pytest.raises(ValueError, match="tool_choice"):
        GenParams(tool_choice="auto")
    with pytest.raises(ValueError, match="neither"):
        GenParams(tools=(READ,), tool_choice="write")


def test_a_completion_serialises_tool_calls_only_when_it_has_some() -> None:
    plain = Completion("hi", Usage(1, 1), finish_reason="stop")
    assert sorted(plain.ledger_form()) == ["finish_reason", "logprobs", "text", "usage"]
    called = Completion("", Usage(1, 1), finish_reason="tool_calls", tool_calls=(ToolCall("c1", "read", "{oops"),))
    assert called.ledger_form()["tool_calls"] == [{"id": "c1", "name": "read", "arguments": "{oops"}]
    assert Completion.from_ledger_form(called.ledger_form()) == called
    assert Completion.from_ledger_form(plain.ledger_form()) == plain


@calls_tools
def _reader(messages: Sequence[Message], params: GenParams) -> str | PolicyReply:
    """Reads `a` once, then answers with what the tool gave back."""
    results = [m for m in messages if m.role == "tool"]
    if results:
        return f"it says {results[-1].content}"
    return PolicyReply("", (ToolCall("c1", "read", json.dumps({"path": "a"})),))


def _model(tmp_path: Path, backend: ScriptedBackend) -> tuple[RoleModel, RunStore]:
    store = RunStore(tmp_path / "run")
    model = RoleModel(role="proposer", model_name="p", backend=backend, spec=ModelSpec(backend="scripted", model="p"),
                      store=store, cache=ResponseCache(tmp_path / "cache.sqlite"))
    return model.scoped(CallScope(cell="c", phase="practice", unit="u")), store


def test_tool_calls_and_results_are_in_the_ledger_and_the_cache(tmp_path: Path) -> None:
    model, store = _model(tmp_path, ScriptedBackend("reader", _reader))
    assert model.function_calling
    params = GenParams(tools=(READ,), tool_choice="auto")
    first = model.complete([Message("user", "what is in a?")], params)
    assert first.tool_calls == (ToolCall("c1", "read", '{"path": "a"}'),) and first.finish_reason == "tool_calls"
    chat = [Message("user", "what is in a?"), Message("assistant", "", tool_calls=first.tool_calls),
            Message("tool", "alpha", tool_call_id="c1")]
    second = model.complete(chat, params)
    assert second.text == "it says alpha"
    assert model.complete([Message("user", "what is in a?")], params) == first  # a cache hit keeps the calls
    rows = store.query("SELECT id, cached, params FROM calls ORDER BY id")
    assert [r["cached"] for r in rows] == [0, 0, 1]
    assert json.loads(rows[0]["params"])["tools"] == [to_plain(READ)]
    conv = conversation(store, rows[1]["id"])
    assert conv is not None and conv.messages == [
        TextMessage("user", "what is in a?"),
        TextMessage("assistant", "", tool_calls=[{"id": "c1", "name": "read", "arguments": '{"path": "a"}'}]),
        TextMessage("tool", "alpha", tool_call_id="c1")]
    answered = conversation(store, rows[0]["id"])
    assert answered is not None and answered.response is not None
    assert answered.response.tool_calls == [{"id": "c1", "name": "read", "arguments": '{"path": "a"}'}]
    hit = conversation(store, rows[2]["id"])
    assert hit is not None and hit.response == answered.response


def test_a_backend_that_offers_no_function_calling_refuses_tools_before_any_ledger_row(tmp_path: Path) -> None:
    plain = ScriptedBackend("echo", lambda messages, params: "hi")
    model, store = _model(tmp_path, plain)
    assert not model.function_calling
    with pytest.raises(ValueError, match="does not offer function calling.*function_calling: true"):
        model.complete([Message("user", "x")], GenParams(tools=(READ,)))
    assert store.query("SELECT id FROM calls") == []
    assert model.complete([Message("user", "x")]).text == "hi"


def test_function_calling_in_a_spec_is_the_openai_backends_alone() -> None:
    base = {"name": "s", "benchmark": {"name": "arith"}, "methods": [{"name": "frozen"}], "roles": {"solver": "m"}}
    for bad, why in (({"backend": "embedded", "function_calling": True}, "only an openai model's server"),
                     ({"backend": "openai", "base_url": "http://x/v1", "tool_results": "user"},
                      "only for a model with function_calling")):
        with pytest.raises(SpecError, match=why) as err:
            parse_spec({**base, "models": {"m": bad}})
        assert "\n" not in str(err.value)  # one line
    ok = parse_spec({**base, "models": {"m": {"backend": "openai", "base_url": "http://x/v1",
                                              "function_calling": True, "tool_results": "user"}}})
    assert ok.models["m"].dumped()["function_calling"] is True
    plain = parse_spec({**base, "models": {"m": {"backend": "openai", "base_url": "http://x/v1"}}})
    assert "function_calling" not in plain.models["m"].dumped() and plain.spec_hash() != ok.spec_hash()
