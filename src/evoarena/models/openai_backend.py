"""Backend for any OpenAI-compatible chat-completions server (vLLM, Ollama, llama.cpp server, OpenAI).

One attempt per `complete` call: retries, caching, the ledger and concurrency limits live in the wrapper. Failures
become `ProviderError`, retryable for timeouts, connection errors, 408, 409, 429, 5xx and responses that cannot be
read or lack choices or a message; an error response's `Retry-After` rides along as `retry_after` (seconds). The
API key is read from the env var named by `spec.api_key_env` and is never put in an error message or a log line.

Function calling, where the spec says the server offers it (`function_calling: true`): `params.tools` and
`tool_choice` are sent, the reply's `message.tool_calls` read (arguments as the model wrote them, even when they are
not JSON: the caller rejects those), an assistant message's tool calls and a `tool` message's `tool_call_id` sent in
the API's shape — or, with `tool_results: user`, each tool result as a user message naming its call, for a server
whose chat template drops `role: tool` messages (llama-cpp-python's `chatml-function-calling`).

The request is one JSON POST through a pooled `httpx.Client` made once per backend (keep-alive connections, as many
as the endpoint's concurrency), and the reply is read as plain JSON: the `openai` SDK's request building and response
models cost more CPU per call than the rest of a call's bookkeeping together (docs/performance.md).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from evoarena.codec import to_plain
from evoarena.models.base import Completion, GenParams, Message, ProviderError, TokenLogprob, Usage, refuse_tools
from evoarena.models.tooling import ToolCall
from evoarena.spec import ModelSpec

_RETRYABLE_4XX = frozenset({408, 409, 429})
_MAX_DETAIL = 300  # characters of a server's error text kept in a ProviderError message


def is_retryable_status(status: int) -> bool:
    """Timeouts (408), conflicts (409), rate limits (429) and server errors (5xx) are worth retrying."""
    return status in _RETRYABLE_4XX or status >= 500


def resolve_api_key(api_key_env: str | None) -> str:
    """The key from the env var named `api_key_env`; "EMPTY" when no variable is named (local servers)."""
    if not api_key_env:
        return "EMPTY"
    value = os.environ.get(api_key_env)
    if not value:
        raise ProviderError(
            f"openai backend: environment variable {api_key_env} (named by api_key_env) is not set or empty",
            retryable=False,
        )
    return value


class OpenAIBackend:
    """Chat completions (`POST {base_url}/chat/completions`) against `spec.base_url`."""

    backend_name = "openai"

    def __init__(self, spec: ModelSpec) -> None:
        if spec.backend != "openai":
            raise ValueError(f"OpenAIBackend needs a spec with backend 'openai', got {spec.backend!r}")
        if not spec.base_url:
            raise ValueError("OpenAIBackend needs spec.base_url")
        self.spec = spec
        self.model_id = f"openai:{spec.model}"
        self.endpoint = spec.base_url
        self.function_calling = spec.function_calling
        key = resolve_api_key(spec.api_key_env)
        # Kept only to scrub it from error text; "EMPTY" is not a secret.
        self._secret = key if spec.api_key_env else None
        # no cap on connections here (the endpoint's concurrency limit caps calls in flight); as many kept alive
        self._client = httpx.Client(
            base_url=spec.base_url.rstrip("/") + "/", timeout=spec.timeout_s,
            headers={"Authorization": f"Bearer {key}", "Accept": "application/json",
                     "Content-Type": "application/json"},
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=max(20, spec.concurrency)))

    def __repr__(self) -> str:  # never show the client (it holds the key)
        return f"OpenAIBackend(model_id={self.model_id!r}, endpoint={self.endpoint!r})"

    def close(self) -> None:
        self._client.close()

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion:
        refuse_tools(self, params)
        kwargs: dict[str, Any] = {
            "model": self.spec.model,
            "messages": wire_messages(messages, tool_results=self.spec.tool_results),
            "temperature": params.temperature,
            "max_tokens": params.max_tokens,
        }
        if params.tools:
            kwargs["tools"] = [{"type": "function", "function": to_plain(t)} for t in params.tools]
            if params.tool_choice in ("auto", "none", "required"):
                kwargs["tool_choice"] = params.tool_choice
            elif params.tool_choice is not None:
                kwargs["tool_choice"] = {"type": "function", "function": {"name": params.tool_choice}}
        if params.stop:
            kwargs["stop"] = list(params.stop)
        if params.seed is not None:
            kwargs["seed"] = params.seed
        if params.logprobs:
            kwargs["logprobs"] = True
        if params.top_logprobs:
            kwargs["top_logprobs"] = params.top_logprobs
        try:
            resp = self._client.post("chat/completions", content=request_body(kwargs))
        except httpx.TimeoutException:
            raise self._error(f"timed out after {self.spec.timeout_s:g}s", retryable=True) from None
        except httpx.TransportError as err:
            raise self._error(f"connection failed ({_detail(f'{type(err).__name__}: {err}')})",
                              retryable=True) from None
        if resp.status_code >= 400:
            status, wait = resp.status_code, retry_after_s(resp.headers)
            asked = "" if wait is None else f" (Retry-After: {wait:g} s)"
            raise self._error(f"HTTP {status}: {_detail(resp.text)}{asked}", retryable=is_retryable_status(status),
                              status=status, retry_after=wait)
        try:
            return self._to_completion(resp.json(), params)
        except ProviderError:
            raise
        except Exception as err:  # a 200 that cannot be read (truncated JSON, HTML from a proxy, wrong types, …)
            raise self._error(f"unreadable response ({type(err).__name__}: {_detail(str(err))})",
                              retryable=True) from None

    def _to_completion(self, resp: Any, params: GenParams) -> Completion:
        """The completion of a decoded response; a structurally wrong one (no choices, a choice without a message)
        is a retryable provider error, never an empty answer."""
        choices = resp.get("choices") if isinstance(resp, dict) else None
        if not isinstance(choices, list) or not choices:
            raise self._error(f"malformed response (no choices): {_detail(str(resp))}", retryable=True)
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            raise self._error(f"malformed response (a choice without a message): {_detail(str(resp))}",
                              retryable=True)
        text = str(message.get("content") or "")

        logprobs: tuple[TokenLogprob, ...] | None = None
        if params.logprobs:
            content = (choice.get("logprobs") or {}).get("content")
            if content is not None:
                logprobs = tuple(TokenLogprob(token=str(t["token"]), logprob=float(t["logprob"]),
                                              top=_top(t) if params.top_logprobs else None) for t in content)

        extra: dict[str, Any] = {}
        usage = resp.get("usage")
        if usage is None:
            extra["usage_missing"] = True
            in_tok = out_tok = 0
        else:
            in_tok = int(usage.get("prompt_tokens") or 0)
            out_tok = int(usage.get("completion_tokens") or 0)
            reused = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
            if reused is not None:  # the server's own prompt cache (vLLM, llama.cpp server, OpenAI) reused these
                extra["input_tokens_evaluated"] = max(0, in_tok - int(reused))
        return Completion(
            text=text,
            usage=Usage(input_tokens=in_tok, output_tokens=out_tok),
            logprobs=logprobs,
            finish_reason=choice.get("finish_reason"),
            extra=extra,
            tool_calls=_tool_calls(message.get("tool_calls")),
        )

    def _error(self, what: str, *, retryable: bool, status: int | None = None,
               retry_after: float | None = None) -> ProviderError:
        msg = f"openai backend ({self.model_id} at {self.endpoint}): {what}"
        if self._secret:
            msg = msg.replace(self._secret, "***")
        return ProviderError(msg, retryable=retryable, status=status, retry_after=retry_after)


def request_body(fields: Mapping[str, Any]) -> bytes:
    """The request's JSON as the `openai` SDK sent it (model, messages, then the other fields by name; compact; UTF-8
    unescaped), so the bytes a server sees did not change when the SDK was taken out of the path."""
    head = {k: fields[k] for k in ("model", "messages")}
    rest = {k: fields[k] for k in sorted(fields) if k not in head}
    return json.dumps({**head, **rest}, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def retry_after_s(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The wait a response asks for, in seconds: `retry-after-ms` (OpenAI's), else `Retry-After` as seconds or as an
    HTTP date (RFC 9110); None when it asks for none or says something unreadable. A date in the past is 0."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        ms = _seconds(raw_ms)
        if ms is not None:
            return ms / 1000
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = _seconds(raw)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(raw.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _seconds(raw: str) -> float | None:
    """A non-negative, finite number of seconds, else None."""
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def wire_messages(messages: Sequence[Message], *, tool_results: str = "tool") -> list[dict[str, Any]]:
    """The messages in the chat-completions shape: `{role, content}`, plus an assistant's `tool_calls` and a tool
    result's `tool_call_id`; with `tool_results="user"` a tool result goes as a user message that names its call."""
    names = {c.id: c for m in messages for c in m.tool_calls}
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.tool_call_id is not None and tool_results == "user":
            call = names.get(m.tool_call_id)
            shown = f"{call.name} {call.arguments}" if call is not None else m.tool_call_id
            out.append({"role": "user", "content": f"Result of the tool call {shown}:\n{m.content}"})
            continue
        d: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            d["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                               for c in m.tool_calls]
        if m.tool_call_id is not None:
            d["tool_call_id"] = m.tool_call_id
        out.append(d)
    return out


def _tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    """The function calls of a reply's `message.tool_calls` (none: ()); arguments kept as the model wrote them."""
    calls = []
    for i, tc in enumerate(raw or []):
        fn = tc.get("function")
        if not isinstance(fn, dict):  # not a function call (a custom tool's): nothing this backend sent asks for one
            continue
        calls.append(ToolCall(id=str(tc.get("id") or f"call_{i}"), name=str(fn.get("name") or ""),
                              arguments=str(fn.get("arguments") or "")))
    return tuple(calls)


def _detail(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _MAX_DETAIL else text[:_MAX_DETAIL] + "..."


def _top(token: Any) -> tuple[tuple[str, float], ...]:
    """A token's `top_logprobs` alternatives as (token, logprob) pairs (none when the server sent none)."""
    return tuple((str(t["token"]), float(t["logprob"])) for t in (token.get("top_logprobs") or ()))
