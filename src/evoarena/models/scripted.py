"""Scripted backend: deterministic Python policies for mechanism tests (evidence: mechanism)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from evoarena.models.base import Completion, GenParams, Message, Usage

Policy = Callable[[Sequence[Message], GenParams], str]
"""A policy reads the messages like a model would and returns the completion text."""


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

