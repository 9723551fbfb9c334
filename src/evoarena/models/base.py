"""The one model interface every backend implements, and the records it returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class GenParams:
    """Generation parameters; part of the cache key, so keep them plain values."""

    temperature: float = 0.0
    max_tokens: int = 256
    stop: tuple[str, ...] = ()
    seed: int | None = None
    logprobs: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "max_tokens": self.max_tokens, "stop": list(self.stop),
                "seed": self.seed, "logprobs": self.logprobs}


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class TokenLogprob:
    token: str
    logprob: float


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

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "usage": {"input_tokens": self.usage.input_tokens, "output_tokens": self.usage.output_tokens},
            "logprobs": None if self.logprobs is None else [asdict(t) for t in self.logprobs],
            "finish_reason": self.finish_reason,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Completion:
        lps = d.get("logprobs")
        return cls(
            text=d["text"],
            usage=Usage(**d["usage"]),
            logprobs=None if lps is None else tuple(TokenLogprob(**t) for t in lps),
            finish_reason=d.get("finish_reason"),
        )


class ProviderError(Exception):
    """A backend could not produce a completion. `retryable` marks timeouts, 429 and 5xx."""

    def __init__(self, message: str, *, retryable: bool, status: int | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status


@runtime_checkable
class Backend(Protocol):
    """A model backend. `model_id` names the model in the ledger and the cache key;
    `endpoint` names the server (or process) whose concurrency limit the call obeys. A backend may also set
    `greedy_ignores_seed = True` when its temperature-0 answers cannot depend on the seed (the cache then keys
    those calls without it), and `billed = False` when a call reaches no provider and costs nothing (the scripted
    backend: its ledger rows may wait for their unit's commit instead of being written ahead of the call)."""

    model_id: str
    endpoint: str
    backend_name: str

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion: ...
