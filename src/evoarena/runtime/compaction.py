"""Online context compaction at plan-step boundaries (SoL-Pi, seed 000 §10).

Why: an agent's context grows with every tool result and is resent on every call; once a plan step is done, most of
its history matters only as a result ("tests pass after the fix in parser.py"). Compacting there — not at an arbitrary
token count — replaces a finished step's history with a summary while the work in hand stays verbatim.

Two parts:
- `compact(messages, boundary, summarise)`: the compactor. The leading system messages (the harness) and every
  message from `boundary` on are kept verbatim; the messages in between go to `summarise`, a callable
  `Sequence[Message] -> str` (a model wrapped by the caller, or a plain function: the mechanism is model-agnostic),
  and its text becomes one message in their place.
- `OnlineCompaction`: the episode's bookkeeping (requests, context growth, requests per completed step, compactions,
  cache debt) and, at each completed step, the cost gate of `compaction_gate.decide` — which, as the digest notes of
  the paper's §2.5, does not price the summary call itself — then the compactor when the gate says so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evoarena.codec import to_plain
from evoarena.models import Message
from evoarena.runtime.compaction_gate import MEMO_TOKENS, Decision, Economics, GateInput, decide
from evoarena.runtime.text import CHARS_PER_TOKEN, utf8_len

Summarise = Callable[[Sequence[Message]], str]
#: What the released extension asks its summariser to keep (BOUNDARY_COMPACTION_INSTRUCTIONS), for a `summarise`
#: that wraps a model.
SUMMARY_INSTRUCTIONS = "Preserve completed work, verification results, important decisions, and remaining work."
#: The first line of the message that stands for the summarised history.
SUMMARY_HEADER = "[context summary: {n} earlier messages replaced at a plan-step boundary]"


def message_tokens(m: Message) -> int:
    """Estimated tokens of one message (UTF-8 bytes / 4, the released extension's estimate), tool calls included."""
    size = utf8_len(m.content)
    if m.tool_calls:
        size += utf8_len(json.dumps(to_plain(m.tool_calls), ensure_ascii=False))
    return math.ceil(size / CHARS_PER_TOKEN)


def context_tokens(messages: Sequence[Message]) -> int:
    """Estimated tokens of a whole context."""
    return sum(message_tokens(m) for m in messages)


def _system_prefix(messages: Sequence[Message], keep_system: bool) -> int:
    n = 0
    while keep_system and n < len(messages) and messages[n].role == "system":
        n += 1
    return n


@dataclass(frozen=True)
class Compacted:
    """The compacted context and what happened: how many messages were summarised and kept, the summary text, and
    the estimated tokens before and after."""

    messages: tuple[Message, ...]
    summary: str
    summarised: int
    kept: int
    tokens_before: int
    tokens_after: int


def compact(messages: Sequence[Message], boundary: int, summarise: Summarise, *, keep_system: bool = True,
            summary_role: str = "user") -> Compacted:
    """Replace `messages[s:boundary]` by one summary message, where `s` is the end of the leading system messages
    (0 with `keep_system=False`); every other message is kept verbatim, in order. Refused (ValueError): a boundary
    outside the context, nothing to summarise, or a boundary that would separate tool results from the assistant
    message that called them."""
    if not 0 <= boundary <= len(messages):
        raise ValueError(f"boundary {boundary} is outside the context of {len(messages)} messages")
    start = _system_prefix(messages, keep_system)
    archive = tuple(messages[start:boundary])
    if not archive:
        raise ValueError("nothing to summarise before the boundary")
    if boundary < len(messages) and messages[boundary].role == "tool":
        raise ValueError("the boundary would cut tool results off from the assistant message that called them")
    summary = summarise(archive)
    if not isinstance(summary, str):
        raise TypeError(f"summarise returned {type(summary).__name__}, not text")
    note = Message(summary_role, SUMMARY_HEADER.format(n=len(archive)) + "\n" + summary)
    out = (*messages[:start], note, *messages[boundary:])
    return Compacted(out, summary, len(archive), len(messages) - len(archive), context_tokens(messages),
                     context_tokens(out))


@dataclass(frozen=True)
class StepOutcome:
    """A completed step: the context to continue with (compacted or the same), the gate's decision, and the
    compaction if there was one."""

    messages: tuple[Message, ...]
    decision: Decision
    compacted: Compacted | None


class OnlineCompaction:
    """One episode's online compaction: call `record_request(messages)` before each model call and
    `step_completed(messages, remaining_steps=...)` when a plan step is done.

    `cache_write_read_ratio`: the provider's cache-write price over its cache-read price (e.g. 1.25 / 0.1 = 12.5);
    None when unknown, and then only window protection compacts, as released. `context_window_tokens`: the model's
    window (None: no window bound, no window protection)."""

    def __init__(self, summarise: Summarise, *, cache_write_read_ratio: float | None,
                 context_window_tokens: int | None = None, memo_tokens: int = MEMO_TOKENS,
                 economics: Economics = Economics(), keep_system: bool = True,  # noqa: B008 - frozen
                 tokens: Callable[[Sequence[Message]], int] = context_tokens) -> None:
        if cache_write_read_ratio is not None and not (math.isfinite(cache_write_read_ratio)
                                                       and cache_write_read_ratio >= 0):
            raise ValueError("cache_write_read_ratio must be finite and >= 0")
        self.summarise = summarise
        self.cache_write_read_ratio = cache_write_read_ratio
        self.context_window_tokens = context_window_tokens
        self.memo_tokens = memo_tokens
        self.economics = economics
        self.keep_system = keep_system
        self.tokens = tokens
        self.requests = 0
        self.boundary_request_counts: list[int] = []
        self.compactions = 0
        self._last_boundary = 0
        self._last_compaction: int | None = None
        self._last_context: int | None = None
        self._growth_total = 0
        self._growth_count = 0
        self.debt_tokens = 0.0
        self._repayment = 0.0

    def record_request(self, messages: Sequence[Message]) -> None:
        """A model call is about to be made with `messages`: count it, its context growth, and repay cache debt."""
        now = self.tokens(messages)
        delta = 0 if self._last_context is None else now - self._last_context
        self.requests += 1
        self._last_context = now
        if delta > 0:
            self._growth_total += delta
            self._growth_count += 1
        self.debt_tokens = max(0.0, self.debt_tokens - self._repayment)
        if self.debt_tokens == 0:
            self._repayment = 0.0

    @property
    def average_growth(self) -> float | None:
        """Mean positive context growth per request since the last compaction (None: none seen)."""
        return self._growth_total / self._growth_count if self._growth_count else None

    def gate_input(self, messages: Sequence[Message], boundary: int, remaining_steps: int) -> GateInput:
        """What the gate would read for this context and boundary (for inspection and tests)."""
        start = _system_prefix(messages, self.keep_system)
        write = self.tokens(messages)
        return GateInput(
            write_tokens=write, archive_tokens=self.tokens(messages[start:boundary]), context_tokens=write,
            boundary_request_counts=tuple(self.boundary_request_counts), remaining_boundaries=remaining_steps,
            cache_write_read_ratio=self.cache_write_read_ratio, memo_tokens=self.memo_tokens,
            average_context_increment=self.average_growth, context_window_tokens=self.context_window_tokens,
            prior_compactions=self.compactions,
            requests_since_last_compaction=None if self._last_compaction is None
            else self.requests - self._last_compaction,
            carried_debt_tokens=self.debt_tokens)

    def step_completed(self, messages: Sequence[Message], *, remaining_steps: int,
                       boundary: int | None = None) -> StepOutcome:
        """A plan step just completed; `boundary` (default: the end of `messages`) is where its history ends. Record
        the step, ask the gate, and compact when it says so."""
        boundary = len(messages) if boundary is None else boundary
        self.boundary_request_counts.append(max(0, self.requests - self._last_boundary))
        self._last_boundary = self.requests
        decision = decide(self.gate_input(messages, boundary, remaining_steps), self.economics)
        if not decision.compact:
            return StepOutcome(tuple(messages), decision, None)
        done = compact(messages, boundary, self.summarise, keep_system=self.keep_system)
        self.compactions += 1
        self._last_compaction = self.requests
        self._last_context = None
        self._growth_total = self._growth_count = 0
        self.debt_tokens = decision.debt_tokens
        self._repayment = float(max(0, decision.saving_tokens))
        return StepOutcome(done.messages, decision, done)
