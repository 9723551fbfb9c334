"""OpenAIBackend against a minimal local HTTP stub.

The stub below is NOT a model server: it is a few lines of stdlib `http.server`, bound to 127.0.0.1,
used ONLY to inject HTTP status codes and canned JSON bodies so the error mapping, request shape and
key handling can be checked without a network. The end-to-end run against a real OpenAI-compatible
server (llama-cpp-python's) is in test_embedded.py.
"""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from faulty_endpoint import loopback

from evoarena.models.base import Backend, GenParams, Message, ProviderError, TokenLogprob, Usage
from evoarena.models.openai_backend import OpenAIBackend
from evoarena.models.tooling import Tool, ToolCall
from evoarena.spec import ModelSpec

KEY_ENV = "EVOARENA_TEST_STUB_KEY"
SECRET = "sk-test-5f2c1e9a7b3d-do-not-leak"
LogCapture = pytest.LogCaptureFixture
MSGS = [Message("system", "You are terse."), Message("user", "Say hi.")]


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON; str -> sent as-is
    delay_s: float = 0.0
    echo_auth: bool = False  # put the Authorization header into the error body (a careless server)
    content_type: str | None = None  # override (a truncated body still labelled application/json)


@dataclass
class Stub:
    url: str
    reply: Reply = field(default_factory=Reply)
    requests: list[dict[str, Any]] = field(default_factory=list)


def _ok_body(*, usage: bool = True, logprobs: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "stub-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hi there"},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 17, "completion_tokens": 2, "total_tokens": 19}
    if logprobs:
        body["choices"][0]["logprobs"] = {
            "content": [
                {"token": "Hi", "logprob": -0.25, "bytes": [72, 105], "top_logprobs": []},
                {"token": " there", "logprob": -1.5, "bytes": None, "top_logprobs": []},
            ]
        }
    return body


@pytest.fixture
def stub() -> Iterator[Stub]:
    """Minimal local HTTP stub used ONLY to inject status codes / canned bodies (see module docstring)."""
    state = Stub(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server naming)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            # HTTP header names are case-insensitive; the SDK sends them in lower case.
            headers = {k.lower(): v for k, v in self.headers.items()}
            state.requests.append({"path": self.path, "headers": headers, "json": json.loads(raw), "raw": raw})
            r = state.reply
            if r.delay_s:
                time.sleep(r.delay_s)
            body = r.body
            if body is None:
                body = _ok_body() if r.status == 200 else {"error": {"message": f"stub error {r.status}"}}
            if r.echo_auth:
                body = {"error": {"message": f"bad auth header: {self.headers.get('Authorization')}"}}
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            ctype = r.content_type or ("text/plain" if isinstance(body, str) else "application/json")
            try:
                self.send_response(r.status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # client gave up (timeout test)
                pass

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

    with loopback(Handler) as url:
        state.url = url
        yield state


@pytest.fixture
def key_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, SECRET)
    return KEY_ENV


def _backend(url: str, *, key_env: str | None = None, timeout_s: float = 10.0, **more: Any) -> OpenAIBackend:
    fields = {"model": "stub-model", "base_url": url, "api_key_env": key_env, "timeout_s": timeout_s, **more}
    spec = ModelSpec.model_validate({"backend": "openai", **fields})
    return OpenAIBackend(spec)


def test_attributes_and_protocol(stub: Stub) -> None:
    b = _backend(stub.url)
    assert isinstance(b, Backend)
    assert b.backend_name == "openai"
    assert b.model_id == "openai:stub-model"
    assert b.endpoint == stub.url


@pytest.mark.parametrize("status", [429, 503, 500, 502, 408, 409])
def test_retryable_statuses(stub: Stub, status: int) -> None:
    stub.reply = Reply(status=status)
    with pytest.raises(ProviderError) as ei:
        _backend(stub.url).complete(MSGS, GenParams())
    assert ei.value.retryable is True
    assert ei.value.status == status
    assert f"HTTP {status}" in str(ei.value)
    assert len(stub.requests) == 1  # exactly one attempt: the SDK's own retries are off


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_non_retryable_statuses(stub: Stub, status: int) -> None:
    stub.reply = Reply(status=status)
    with pytest.raises(ProviderError) as ei:
        _backend(stub.url).complete(MSGS, GenParams())
    assert ei.value.retryable is False
    assert ei.value.status == status
    assert len(stub.requests) == 1


def test_success_with_usage_and_logprobs(stub: Stub) -> None:
    stub.reply = Reply(body=_ok_body(logprobs=True))
    params = GenParams(temperature=0.7, max_tokens=12, stop=("\n\n", "Q:"), seed=123, logprobs=True)
    out = _backend(stub.url).complete(MSGS, params)
    assert out.text == "Hi there"
    assert out.usage == Usage(input_tokens=17, output_tokens=2)
    assert out.logprobs == (TokenLogprob("Hi", -0.25), TokenLogprob(" there", -1.5))
    assert out.finish_reason == "stop"
    assert out.extra == {}

    (req,) = stub.requests
    assert req["path"] == "/v1/chat/completions"
    sent = req["json"]
    assert sent["model"] == "stub-model"
    assert sent["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Say hi."},
    ]
    assert sent["temperature"] == 0.7
    assert sent["max_tokens"] == 12
    assert sent["stop"] == ["\n\n", "Q:"]
    assert sent["seed"] == 123
    assert sent["logprobs"] is True


def test_optional_fields_omitted(stub: Stub) -> None:
    out = _backend(stub.url).complete(MSGS, GenParams())
    assert out.logprobs is None and out.tool_calls == ()
    sent = stub.requests[0]["json"]
    for absent in ("stop", "seed", "logprobs"):
        assert absent not in sent
    assert sent["temperature"] == 0.0
    # without tools the request is what it was before function calling existed, even where the server offers it
    _backend(stub.url, function_calling=True).complete(MSGS, GenParams())
    for req in stub.requests:
        assert req["json"] == {"model": "stub-model", "messages": [{"role": "system", "content": "You are terse."},
                                                                   {"role": "user", "content": "Say hi."}],
                               "temperature": 0.0, "max_tokens": 256}


def test_the_request_bytes_are_the_openai_sdks(stub: Stub) -> None:
    """model, messages, then the other fields by name, compact, UTF-8 unescaped: what the `openai` SDK sent."""
    params = GenParams(temperature=0.5, max_tokens=9, stop=("x",), seed=3, logprobs=True)
    _backend(stub.url).complete([Message("user", "Bé terse.")], params)
    assert stub.requests[0]["raw"] == ('{"model":"stub-model","messages":[{"role":"user","content":"Bé terse."}],'
                                       '"logprobs":true,"max_tokens":9,"seed":3,"stop":["x"],"temperature":0.5}'
                                       ).encode()
    assert stub.requests[0]["headers"]["content-type"] == "application/json"


def test_logprobs_requested_but_not_offered(stub: Stub) -> None:
    out = _backend(stub.url).complete(MSGS, GenParams(logprobs=True))
    assert out.logprobs is None
    assert out.text == "Hi there"


def test_usage_missing(stub: Stub) -> None:
    stub.reply = Reply(body=_ok_body(usage=False))
    out = _backend(stub.url).complete(MSGS, GenParams())
    assert out.usage == Usage(0, 0)
    assert out.extra == {"usage_missing": True}


def test_null_content_becomes_empty_text(stub: Stub) -> None:
    body = _ok_body()
    body["choices"][0]["message"]["content"] = None
    stub.reply = Reply(body=body)
    assert _backend(stub.url).complete(MSGS, GenParams()).text == ""


@pytest.mark.parametrize("body", [
    '{"id": "x", "choices": [ {"message": ',  # a 200 cut off mid-body, labelled JSON
    "<html>gateway says hello</html>",
    {**_ok_body(), "choices": []},
    {**_ok_body(), "choices": [{"index": 0, "finish_reason": "stop"}]},  # a choice without a message
    {"id": "x", "object": "chat.completion"},  # no choices at all
], ids=["truncated-json", "html", "empty-choices", "no-message", "no-choices"])
def test_an_unreadable_or_malformed_200_is_a_retryable_provider_error(stub: Stub, body: Any) -> None:
    stub.reply = Reply(body=body, content_type="application/json")
    with pytest.raises(ProviderError) as ei:
        _backend(stub.url).complete(MSGS, GenParams())
    assert ei.value.retryable is True and "openai backend (openai:stub-model" in str(ei.value)


def test_bearer_token_sent_and_never_leaked(stub: Stub, key_env: str, caplog: LogCapture) -> None:
    caplog.set_level(logging.DEBUG)
    b = _backend(stub.url, key_env=key_env)
    b.complete(MSGS, GenParams())
    assert stub.requests[0]["headers"]["authorization"] == f"Bearer {SECRET}"

    texts = [repr(b), str(b.__dict__.get("spec"))]
    # A careless server that echoes the Authorization header back in its error body.
    stub.reply = Reply(status=401, echo_auth=True)
    with pytest.raises(ProviderError) as ei:
        b.complete(MSGS, GenParams())
    assert ei.value.status == 401 and ei.value.retryable is False
    assert "***" in str(ei.value)  # the echo was scrubbed, not dropped silently
    texts += [str(ei.value), repr(ei.value)]
    for status in (429, 503, 400):
        stub.reply = Reply(status=status)
        with pytest.raises(ProviderError) as ei:
            b.complete(MSGS, GenParams())
        texts += [str(ei.value), repr(ei.value)]
    texts.append(caplog.text)
    for text in texts:
        assert SECRET not in text


def test_missing_key_env_names_the_variable(stub: Stub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVOARENA_TEST_ABSENT_KEY", raising=False)
    with pytest.raises(ProviderError) as ei:
        _backend(stub.url, key_env="EVOARENA_TEST_ABSENT_KEY")
    assert "EVOARENA_TEST_ABSENT_KEY" in str(ei.value)
    assert ei.value.retryable is False


def test_no_key_env_sends_placeholder(stub: Stub) -> None:
    _backend(stub.url).complete(MSGS, GenParams())
    assert stub.requests[0]["headers"]["authorization"] == "Bearer EMPTY"


def test_timeout_is_retryable(stub: Stub) -> None:
    stub.reply = Reply(delay_s=2.0)
    t0 = time.monotonic()
    with pytest.raises(ProviderError) as ei:
        _backend(stub.url, timeout_s=0.3).complete(MSGS, GenParams())
    assert ei.value.retryable is True
    assert ei.value.status is None
    assert "timed out" in str(ei.value)
    assert time.monotonic() - t0 < 1.9  # one attempt, no SDK retries
    assert len(stub.requests) == 1


def test_connection_refused_is_retryable() -> None:
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ProviderError) as ei:
        _backend(f"http://127.0.0.1:{port}/v1", timeout_s=5).complete(MSGS, GenParams())
    assert ei.value.retryable is True
    assert ei.value.status is None


# --- function calling ------------------------------------------------------------------------------------------

READ = Tool("read", "Read a file.",
            {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
LS = Tool("ls", "List files.", {"type": "object", "properties": {}})


def _tool_call_body(*calls: tuple[str, str, str]) -> dict[str, Any]:
    body = _ok_body()
    body["choices"][0]["finish_reason"] = "tool_calls"
    body["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": [
        {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls]}
    return body


@pytest.mark.parametrize(("choice", "sent_choice"), [
    (None, None), ("auto", "auto"), ("none", "none"), ("read", {"type": "function", "function": {"name": "read"}}),
])
def test_tools_and_tool_choice_are_sent(stub: Stub, choice: str | None, sent_choice: Any) -> None:
    _backend(stub.url, function_calling=True).complete(MSGS, GenParams(tools=(READ, LS), tool_choice=choice))
    sent = stub.requests[0]["json"]
    assert sent["tools"] == [
        {"type": "function", "function": {"name": "read", "description": "Read a file.",
                                          "parameters": READ.parameters}},
        {"type": "function", "function": {"name": "ls", "description": "List files.", "parameters": LS.parameters}}]
    assert sent.get("tool_choice") == sent_choice


def test_tool_calls_are_read_and_malformed_arguments_kept_as_they_are(stub: Stub) -> None:
    stub.reply = Reply(body=_tool_call_body(("call_1", "read", '{"path": "a.md"}'), ("call_2", "ls", '{"dir": ')))
    out = _backend(stub.url, function_calling=True).complete(MSGS, GenParams(tools=(READ, LS), tool_choice="auto"))
    assert out.text == "" and out.finish_reason == "tool_calls"
    assert out.tool_calls == (ToolCall("call_1", "read", '{"path": "a.md"}'), ToolCall("call_2", "ls", '{"dir": '))
    assert out.tool_calls[0].parsed() == {"path": "a.md"}
    with pytest.raises(ValueError):
        out.tool_calls[1].parsed()


CALL = ToolCall("call_1", "read", '{"path": "a.md"}')
CHAT = [*MSGS, Message("assistant", "", tool_calls=(CALL,)), Message("tool", "alpha", tool_call_id="call_1")]


def test_tool_calls_and_results_are_sent_in_the_apis_shape(stub: Stub) -> None:
    _backend(stub.url, function_calling=True).complete(CHAT, GenParams(tools=(READ,), tool_choice="none"))
    assert stub.requests[0]["json"]["messages"][2:] == [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"path": "a.md"}'}}]},
        {"role": "tool", "content": "alpha", "tool_call_id": "call_1"}]


def test_tool_results_as_user_messages_name_their_call(stub: Stub) -> None:
    b = _backend(stub.url, function_calling=True, tool_results="user")
    b.complete(CHAT, GenParams(tools=(READ,), tool_choice="none"))
    sent = stub.requests[0]["json"]["messages"]
    assert sent[2]["tool_calls"][0]["id"] == "call_1"  # the call itself is sent as the API has it
    assert sent[3] == {"role": "user", "content": 'Result of the tool call read {"path": "a.md"}:\nalpha'}


def test_tools_are_refused_where_the_spec_does_not_say_the_server_offers_them(stub: Stub) -> None:
    with pytest.raises(ValueError, match="does not offer function calling"):
        _backend(stub.url).complete(MSGS, GenParams(tools=(READ,)))
    assert stub.requests == []


def test_top_logprobs_are_asked_for_and_read(stub: Stub) -> None:
    body = _ok_body(logprobs=True)
    body["choices"][0]["logprobs"]["content"][0]["top_logprobs"] = [
        {"token": "Hi", "logprob": -0.25, "bytes": None}, {"token": "Hello", "logprob": -1.75, "bytes": None}]
    stub.reply = Reply(body=body)
    out = _backend(stub.url).complete(MSGS, GenParams(logprobs=True, top_logprobs=2))
    assert stub.requests[0]["json"]["top_logprobs"] == 2 and stub.requests[0]["json"]["logprobs"] is True
    assert out.logprobs is not None
    assert out.logprobs[0] == TokenLogprob("Hi", -0.25, (("Hi", -0.25), ("Hello", -1.75)))
    assert out.logprobs[1] == TokenLogprob(" there", -1.5, ())  # the server sent no alternatives for it
    # without top_logprobs the alternatives are neither asked for nor kept
    out = _backend(stub.url).complete(MSGS, GenParams(logprobs=True))
    assert "top_logprobs" not in stub.requests[1]["json"]
    assert out.logprobs is not None and all(t.top is None for t in out.logprobs)


def test_a_servers_cached_prompt_tokens_say_how_many_were_computed(stub: Stub) -> None:
    body = _ok_body()
    body["usage"]["prompt_tokens_details"] = {"cached_tokens": 12}
    stub.reply = Reply(body=body)
    out = _backend(stub.url).complete(MSGS, GenParams())
    assert out.usage == Usage(input_tokens=17, output_tokens=2) and out.extra == {"input_tokens_evaluated": 5}
    stub.reply = Reply(body=_ok_body())  # a server that does not say: unknown, not "all of them"
    assert "input_tokens_evaluated" not in _backend(stub.url).complete(MSGS, GenParams()).extra
