"""Backend for any OpenAI-compatible chat-completions server (vLLM, Ollama, llama.cpp server, OpenAI).

One attempt per `complete` call: retries, caching, the ledger and concurrency limits live in the wrapper. Failures
become `ProviderError`, retryable for timeouts, connection errors, 408, 409, 429, 5xx and responses that cannot be
read or lack choices or a message. The API key is read from the env var named by `spec.api_key_env` and is never put
in an error message or a log line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import openai
from openai import OpenAI

from evoarena.models.base import Completion, GenParams, Message, ProviderError, TokenLogprob, Usage
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
    """Chat completions through the official `openai` SDK against `spec.base_url`."""

    backend_name = "openai"

    def __init__(self, spec: ModelSpec) -> None:
        if spec.backend != "openai":
            raise ValueError(f"OpenAIBackend needs a spec with backend 'openai', got {spec.backend!r}")
        if not spec.base_url:
            raise ValueError("OpenAIBackend needs spec.base_url")
        self.spec = spec
        self.model_id = f"openai:{spec.model}"
        self.endpoint = spec.base_url
        key = resolve_api_key(spec.api_key_env)
        # Kept only to scrub it from error text; "EMPTY" is not a secret.
        self._secret = key if spec.api_key_env else None
        self._client = OpenAI(base_url=spec.base_url, api_key=key, max_retries=0, timeout=spec.timeout_s)

    def __repr__(self) -> str:  # never show the client (it holds the key)
        return f"OpenAIBackend(model_id={self.model_id!r}, endpoint={self.endpoint!r})"

    def close(self) -> None:
        self._client.close()

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion:
        kwargs: dict[str, Any] = {
            "model": self.spec.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": params.temperature,
            "max_tokens": params.max_tokens,
        }
        if params.stop:
            kwargs["stop"] = list(params.stop)
        if params.seed is not None:
            kwargs["seed"] = params.seed
        if params.logprobs:
            kwargs["logprobs"] = True
        try:
            resp = self._client.chat.completions.create(**kwargs)
        except openai.APITimeoutError:
            raise self._error(f"timed out after {self.spec.timeout_s:g}s", retryable=True) from None
        except openai.APIConnectionError as err:
            raise self._error(f"connection failed ({_cause(err)})", retryable=True) from None
        except openai.APIStatusError as err:
            status = err.status_code
            raise self._error(
                f"HTTP {status}: {_detail(err.message)}", retryable=is_retryable_status(status), status=status
            ) from None
        except Exception as err:  # a 200 whose body the SDK cannot read (truncated JSON, HTML from a proxy, …)
            raise self._error(f"unreadable response ({type(err).__name__}: {_detail(str(err))})",
                              retryable=True) from None
        return self._to_completion(resp, params)

    def _to_completion(self, resp: Any, params: GenParams) -> Completion:
        """The completion of a parsed response; a structurally wrong one (no choices, a choice without a message)
        is a retryable provider error, never an empty answer."""
        choices = getattr(resp, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise self._error(f"malformed response (no choices): {_detail(str(resp))}", retryable=True)
        choice = choices[0]
        message = getattr(choice, "message", None)
        if message is None:
            raise self._error(f"malformed response (a choice without a message): {_detail(str(resp))}",
                              retryable=True)
        text = getattr(message, "content", None) or ""

        logprobs: tuple[TokenLogprob, ...] | None = None
        if params.logprobs:
            content = getattr(getattr(choice, "logprobs", None), "content", None)
            if content is not None:
                logprobs = tuple(TokenLogprob(token=t.token, logprob=float(t.logprob)) for t in content)

        extra: dict[str, Any] = {}
        usage = getattr(resp, "usage", None)
        if usage is None:
            extra["usage_missing"] = True
            in_tok = out_tok = 0
        else:
            in_tok = int(getattr(usage, "prompt_tokens", None) or 0)
            out_tok = int(getattr(usage, "completion_tokens", None) or 0)
        return Completion(
            text=text,
            usage=Usage(input_tokens=in_tok, output_tokens=out_tok),
            logprobs=logprobs,
            finish_reason=getattr(choice, "finish_reason", None),
            extra=extra,
        )

    def _error(self, what: str, *, retryable: bool, status: int | None = None) -> ProviderError:
        msg = f"openai backend ({self.model_id} at {self.endpoint}): {what}"
        if self._secret:
            msg = msg.replace(self._secret, "***")
        return ProviderError(msg, retryable=retryable, status=status)


def _detail(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _MAX_DETAIL else text[:_MAX_DETAIL] + "..."


def _cause(err: BaseException) -> str:
    cause = err.__cause__ or err.__context__
    return _detail(f"{type(cause).__name__}: {cause}") if cause is not None else _detail(str(err))
