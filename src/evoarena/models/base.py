"""The one model interface every backend implements, and the records it returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from evoarena.codec import to_plain
from evoarena.models.tooling import Tool, ToolCall, tool_calls_from_json, tools_from_json


@dataclass(frozen=True)
class Message:
    """One chat message. An assistant message may carry the tool calls it made (`tool_calls`); a `tool` message is
    the result of one of them (`tool_call_id`)."""

    role: str  # "system" | "user" | "assistant" | "tool"
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    def ledger_form(self) -> list[Any]:
        """Its form in the ledger and the prompt hash: `[role, content]`, with a third element only when it carries
        tool calls or answers one (so a conversation without tools hashes, caches and is ledgered exactly as before
        tools existed)."""
        extra: dict[str, Any] = {}
        if self.tool_calls:
            extra["tool_calls"] = to_plain(self.tool_calls)
        if self.tool_call_id is not None:
            extra["tool_call_id"] = self.tool_call_id
        return [self.role, self.content, extra] if extra else [self.role, self.content]

    @classmethod
    def from_ledger_form(cls, value: Any) -> Message:
        """The message of `ledger_form`'s form, checked (it may come from a method's process)."""
        if not isinstance(value, list | tuple) or len(value) not in (2, 3):
            raise TypeError("a message is [role, content] or [role, content, {tool_calls, tool_call_id}]")
        role, content = value[0], value[1]
        extra = value[2] if len(value) == 3 else {}
        if not isinstance(role, str) or not isinstance(content, str) or not isinstance(extra, Mapping):
            raise TypeError("a message's role and content are strings, its extra a mapping")
        call_id = extra.get("tool_call_id")
        if call_id is not None and not isinstance(call_id, str):
            raise TypeError("a message's tool_call_id is a string")
        return cls(role, content, tool_calls_from_json(extra.get("tool_calls") or []), call_id)


MAX_TOP_LOGPROBS = 20  # the OpenAI API's limit


@dataclass(frozen=True)
class GenParams:
    """Generation parameters; part of the cache key, so keep them plain values. `tools` (function calling) and
    `tool_choice` (None: the server's default; "auto", "none", "required", or the name of a tool to force) join the
    key only when tools are given. `top_logprobs` (with `logprobs`): the n most likely tokens at every generated
    position, each with its logprob (`TokenLogprob.top`); it joins the key only when > 0."""

    temperature: float = 0.0
    max_tokens: int = 256
    stop: tuple[str, ...] = ()
    seed: int | None = None
    logprobs: bool = False
    tools: tuple[Tool, ...] = ()
    tool_choice: str | None = None
    top_logprobs: int = 0

    def __post_init__(self) -> None:
        if self.top_logprobs < 0 or self.top_logprobs > MAX_TOP_LOGPROBS:
            raise ValueError(f"top_logprobs must be in [0, {MAX_TOP_LOGPROBS}], got {self.top_logprobs}")
        if self.top_logprobs and not self.logprobs:
            raise ValueError("top_logprobs needs logprobs=True")
        if self.tool_choice is not None and not self.tools:
            raise ValueError("tool_choice without tools")
        names = [t.name for t in self.tools]
        if len(set(names)) != len(names):
            raise ValueError(f"two tools share a name: {names}")
        if self.tool_choice not in (None, "auto", "none", "required", *names):
            raise ValueError(f"tool_choice {self.tool_choice!r} is neither auto, none, required nor a tool's name")

    def ledger_form(self) -> dict[str, Any]:
        """Its form in the cache key and the ledger's `params` column: the optional fields only when set, so a key
        made before they existed stays the same."""
        d: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens, "stop": list(self.stop),
                             "seed": self.seed, "logprobs": self.logprobs}
        if self.top_logprobs:
            d["top_logprobs"] = self.top_logprobs
        if self.tools:
            d["tools"] = to_plain(self.tools)
            if self.tool_choice is not None:
                d["tool_choice"] = self.tool_choice
        return d

    @classmethod
    def from_ledger_form(cls, d: Mapping[str, Any]) -> GenParams:
        """The parameters of `ledger_form`'s form (`stop` and `tools` arrive as lists)."""
        return cls(**{**d, "stop": tuple(d.get("stop") or ()), "tools": tools_from_json(d.get("tools") or [])})


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token and its logprob; `top` (when `GenParams.top_logprobs` asked for it): the most likely
    tokens at that position, most likely first, as (token, logprob) pairs (the generated one among them or not)."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] | None = None

    def ledger_form(self) -> dict[str, Any]:
        """Its form in the ledger and the response cache: `top` only when present (so a completion without
        alternatives is stored as before)."""
        d: dict[str, Any] = {"token": self.token, "logprob": self.logprob}
        if self.top is not None:
            d["top"] = [[t, lp] for t, lp in self.top]
        return d

    @classmethod
    def from_ledger_form(cls, d: Mapping[str, Any]) -> TokenLogprob:
        top = d.get("top")
        return cls(str(d["token"]), float(d["logprob"]),
                   None if top is None else tuple((str(t), float(lp)) for t, lp in top))


@dataclass(frozen=True)
class Completion:
    """What a backend returns: text, token usage and (when offered) per-token logprobs; through a RoleModel, also
    the id of the ledger row it was recorded as."""

    text: str
    usage: Usage
    logprobs: tuple[TokenLogprob, ...] | None = None
    finish_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # The ledger row (calls.id) this completion was recorded as; set by RoleModel, never cached, not compared.
    call_id: int | None = field(default=None, compare=False)
    # The tool calls the model made (function calling), their arguments as the model wrote them (maybe not JSON).
    tool_calls: tuple[ToolCall, ...] = ()

    def ledger_form(self) -> dict[str, Any]:
        """Its form in the response cache: text, usage, logprobs, finish reason, and tool calls only when made (never
        `extra` or `call_id`)."""
        d: dict[str, Any] = {
            "text": self.text,
            "usage": {"input_tokens": self.usage.input_tokens, "output_tokens": self.usage.output_tokens},
            "logprobs": None if self.logprobs is None else [t.ledger_form() for t in self.logprobs],
            "finish_reason": self.finish_reason,
        }
        if self.tool_calls:
            d["tool_calls"] = to_plain(self.tool_calls)
        return d

    @classmethod
    def from_ledger_form(cls, d: dict[str, Any]) -> Completion:
        lps = d.get("logprobs")
        return cls(
            text=d["text"],
            usage=Usage(**d["usage"]),
            logprobs=None if lps is None else tuple(TokenLogprob.from_ledger_form(t) for t in lps),
            finish_reason=d.get("finish_reason"),
            tool_calls=tool_calls_from_json(d.get("tool_calls") or []),
        )


class ProviderError(Exception):
    """A backend could not produce a completion. `retryable` marks timeouts, 429 and 5xx; `retry_after`: the seconds
    the provider asked to wait before the next try (its `Retry-After`), None when it said nothing."""

    def __init__(self, message: str, *, retryable: bool, status: int | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after


@runtime_checkable
class Backend(Protocol):
    """A model backend. `model_id` names the model in the ledger and the cache key;
    `endpoint` names the server (or process) whose concurrency limit the call obeys. A backend may also set
    `greedy_ignores_seed = True` when its temperature-0 answers cannot depend on the seed (the cache then keys
    those calls without it), `billed = False` when a call reaches no provider and costs nothing (the scripted
    backend: its ledger rows may wait for their unit's commit instead of being written ahead of the call), and
    `function_calling = True` when it takes `params.tools` (one that does not refuses a call with tools)."""

    model_id: str
    endpoint: str
    backend_name: str

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion: ...


def offers_function_calling(backend: object) -> bool:
    """Whether `backend` takes tools (`GenParams.tools`): its `function_calling` attribute, False when it has none."""
    return bool(getattr(backend, "function_calling", False))


def refuse_tools(backend: object, params: GenParams) -> None:
    """A clear error for a call with tools to a backend that does not offer function calling."""
    if params.tools and not offers_function_calling(backend):
        name = getattr(backend, "model_id", type(backend).__name__)
        raise ValueError(f"{name} does not offer function calling, so a call with tools cannot be made (an openai "
                         "model whose server offers it says so in its spec: function_calling: true)")
