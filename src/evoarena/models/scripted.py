"""Scripted backend: deterministic Python policies for mechanism tests (evidence: mechanism)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

from evoarena.models.base import Completion, GenParams, Message, Usage

Policy = Callable[[Sequence[Message], GenParams], str]
"""A policy reads the messages like a model would and returns the completion text."""

_POLICIES: dict[str, Policy] = {}


def register_policy(name: str) -> Callable[[Policy], Policy]:
    def deco(fn: Policy) -> Policy:
        _POLICIES[name] = fn
        return fn

    return deco


def get_policy(name: str) -> Policy:
    if ":" in name:  # "package.module:function" for user policies
        module, _, attr = name.partition(":")
        fn: Policy = getattr(importlib.import_module(module), attr)
        return fn
    importlib.import_module("evoarena.benchmarks")  # benchmarks register their policies on import
    if name not in _POLICIES:
        raise KeyError(f"unknown scripted policy {name!r} (known: {sorted(_POLICIES)})")
    return _POLICIES[name]


def count_tokens(text: str) -> int:
    """Scripted 'tokens' are whitespace-separated words: deterministic, and labelled as such in docs."""
    return len(text.split())


class ScriptedBackend:
    backend_name = "scripted"

    def __init__(self, policy_name: str) -> None:
        self.policy = get_policy(policy_name)
        self.model_id = f"scripted:{policy_name}"
        self.endpoint = f"scripted:{policy_name}"

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion:
        text = self.policy(messages, params)
        for stop in params.stop:
            if stop and stop in text:
                text = text[: text.index(stop)]
        finish = "stop"
        words = text.split(" ")
        if count_tokens(text) > params.max_tokens:  # like a real model, stop at max_tokens
            kept: list[str] = []
            for w in words:
                if count_tokens(" ".join(kept + [w])) > params.max_tokens:
                    break
                kept.append(w)
            text, finish = " ".join(kept), "length"
        n_in = sum(count_tokens(m.content) for m in messages)
        return Completion(text=text, usage=Usage(n_in, count_tokens(text)), finish_reason=finish)


@register_policy("echo")
def echo_policy(messages: Sequence[Message], params: GenParams) -> str:
    """Returns the last user message: for plumbing tests."""
    users = [m.content for m in messages if m.role == "user"]
    return users[-1] if users else ""
