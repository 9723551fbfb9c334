"""Scripted backend: deterministic Python policies for mechanism tests (evidence: mechanism)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from evoarena.models.base import Completion, GenParams, Message, TokenLogprob, Usage, refuse_tools
from evoarena.models.tooling import ToolCall


@dataclass(frozen=True)
class PolicyReply:
    """What a policy may return instead of text: text and the tool calls it makes (a `calls_tools` policy), and the
    token logprobs it reports (given back only when the call asked for logprobs)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    logprobs: tuple[TokenLogprob, ...] | None = None


Policy = Callable[[Sequence[Message], GenParams], "str | PolicyReply"]
"""A policy reads the messages like a model would and returns the completion text (a policy marked `calls_tools`
also sees `params.tools` and may return a `PolicyReply` with tool calls)."""

P = TypeVar("P")


def calls_tools(policy: P) -> P:
    """Mark a policy as one that takes tools: its backend then offers function calling (`function_calling`)."""
    setattr(policy, "function_calling", True)  # noqa: B010 - an attribute of a function
    return policy


def count_tokens(text: str) -> int:
    """Scripted 'tokens' are whitespace-separated words: deterministic, and labelled as such in docs."""
    return len(text.split())


class ScriptedBackend:
    """A policy played as a model: stop sequences and max_tokens applied as a real backend would."""

    backend_name = "scripted"
    billed = False  # a call costs nothing and reaches no provider: its ledger row may wait for its unit's commit

    def __init__(self, policy_name: str, policy: Policy) -> None:
        self.policy = policy
        self.model_id = f"scripted:{policy_name}"
        self.endpoint = f"scripted:{policy_name}"
        self.function_calling = bool(getattr(policy, "function_calling", False))

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion:
        refuse_tools(self, params)
        reply = self.policy(messages, params)
        text, calls = (reply, ()) if isinstance(reply, str) else (reply.text, reply.tool_calls)
        logprobs = reply.logprobs if isinstance(reply, PolicyReply) and params.logprobs else None
        if calls and not params.tools:
            raise ValueError(f"{self.model_id}: the policy called a tool, but the call offered none")
        for stop in params.stop:
            if stop and stop in text:
                text = text[: text.index(stop)]
        finish = "tool_calls" if calls else "stop"
        words = text.split(" ")
        if count_tokens(text) > params.max_tokens:  # like a real model, stop at max_tokens
            kept: list[str] = []
            for w in words:
                if count_tokens(" ".join(kept + [w])) > params.max_tokens:
                    break
                kept.append(w)
            text, finish = " ".join(kept), "length"
        n_in = sum(count_tokens(m.content) for m in messages)
        n_out = count_tokens(text) + sum(count_tokens(f"{c.name} {c.arguments}") for c in calls)
        return Completion(text=text, usage=Usage(n_in, n_out), logprobs=logprobs, finish_reason=finish,
                          tool_calls=tuple(calls))
