"""Prompt-prefix reuse in the embedded backend: the cache's policy (no model needed) and, marked `embedded`, the real
0.5B evaluating a shared prefix once across interleaved calls with the same answers and the ledger's count."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from evoarena.models.base import GenParams, Message
from evoarena.models.embedded import EmbeddedBackend
from evoarena.models.ledger import RoleModel
from evoarena.models.prefix_cache import (
    CACHE_ENV,
    MIN_TOKENS,
    PrefixCache,
    PrefixReuse,
    PrefixState,
    capacity_bytes,
    shared_prefix,
    tokens_to_evaluate,
)
from evoarena.spec import ModelSpec
from evoarena.store import RunStore

embedded = pytest.mark.embedded


def state(tokens: list[int], size: int = 100) -> PrefixState:
    return PrefixState(tuple(tokens), b"x" * size)


SYS = list(range(1000, 1000 + 2 * MIN_TOKENS))  # a shared "system prompt"


def test_shared_prefix() -> None:
    assert shared_prefix([1, 2, 3], [1, 2, 4]) == 2
    assert shared_prefix([1, 2], [1, 2, 3]) == 2
    assert shared_prefix([], [1]) == 0 and shared_prefix([5], [6]) == 0


def test_longest_picks_the_entry_sharing_most() -> None:
    cache = PrefixCache(10_000)
    a, b = state(SYS + [1, 2, 3]), state(list(range(500, 600)))
    cache.put(a)
    cache.put(b)
    best, n = cache.longest(SYS + [1, 2, 9])
    assert best is a and n == len(SYS) + 2
    assert cache.longest([7, 7, 7]) == (None, 0)


def test_a_newer_state_replaces_the_ones_it_mostly_covers() -> None:
    cache = PrefixCache(10_000)
    cache.put(state(SYS + [1] * 10))  # the shared prefix is most of it: the next one covers it
    cache.put(state(SYS + [2] * 10))
    assert len(cache) == 1 and cache.longest(SYS)[0] == state(SYS + [2] * 10)
    other = state([9] * 40 + SYS)  # shares nothing at the start: kept beside it
    cache.put(other)
    assert len(cache) == 2


def test_each_kind_of_context_restores_and_replaces_only_its_own_states() -> None:
    cache = PrefixCache(10_000)
    batch = PrefixState(tuple(SYS + [1] * 10), b"x" * 100, origin="batch")
    cache.put(batch)
    own = state(SYS + [2] * 10)
    cache.put(own)  # covers the batch state's prefix, but the batch context cannot load it: both kept
    assert len(cache) == 2 and cache.size_bytes == 200
    assert cache.longest(SYS + [2], origin="batch")[0] is batch
    assert cache.longest(SYS + [1] * 10)[0] is own  # the own context's best is its own state
    cache.put(state(list(batch.tokens)))  # the same tokens from the own context: a state of its own, beside it
    assert len(cache) == 2 and cache.longest(batch.tokens, origin="batch")[0] is batch
    cache.put(PrefixState(tuple(SYS + [3] * 10), b"y" * 100, origin="batch"))  # replaces the batch one only
    assert len(cache) == 2 and cache.longest(SYS, origin="batch")[0].tokens[-1] == 3  # type: ignore[union-attr]


def test_bounded_by_bytes_least_recent_out() -> None:
    cache = PrefixCache(250)
    first, second, third = (state([k] * MIN_TOKENS, 100) for k in (1, 2, 3))
    cache.put(first)
    cache.put(second)
    cache.longest([1] * MIN_TOKENS)  # touching `first` makes `second` the least recent
    cache.put(third)
    assert cache.size_bytes == 200 and cache.longest([2] * MIN_TOKENS) == (None, 0)
    assert cache.longest([1] * MIN_TOKENS)[0] is first
    cache.put(state([4] * MIN_TOKENS, 300))  # larger than the bound: not kept, nothing evicted for it
    assert len(cache) == 2
    cache.put(state([5] * (MIN_TOKENS - 1)))  # too short to be worth keeping
    assert len(cache) == 2


def test_capacity_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CACHE_ENV, raising=False)
    assert capacity_bytes() == 1024 << 20
    monkeypatch.setenv(CACHE_ENV, "0")
    assert not PrefixReuse().enabled
    for bad in ("lots", "-1"):
        monkeypatch.setenv(CACHE_ENV, bad)
        with pytest.raises(RuntimeError, match=CACHE_ENV):
            capacity_bytes()


def fake_llm(held: list[int], *, live: bool) -> SimpleNamespace:
    ids = np.array(held, dtype=np.intc)
    return SimpleNamespace(_input_ids=ids, n_tokens=len(held), _requires_eval=not live)


def test_tokens_to_evaluate_follows_llama_cpp_pythons_prefix_match() -> None:
    prompt = SYS + [1, 2, 3]
    assert tokens_to_evaluate(fake_llm([], live=True), prompt) == len(prompt)
    assert tokens_to_evaluate(fake_llm(SYS + [7, 7], live=True), prompt) == 3
    # the whole prompt held: one token is re-evaluated to refresh the logits, none when they are live
    assert tokens_to_evaluate(fake_llm(prompt + [4], live=True), prompt) == 1
    assert tokens_to_evaluate(fake_llm(prompt, live=False), prompt) == 1
    assert tokens_to_evaluate(fake_llm(prompt, live=True), prompt) == 0


# --- the real 0.5B ----------------------------------------------------------------------------

PLAYBOOK = "\n".join(f"- Rule {i}: read the question twice, then answer with a single number only." for i in range(40))
OTHER = "\n".join(f"- Note {i}: keep answers short and never explain the working." for i in range(40))
GREEDY = GenParams(max_tokens=6, temperature=0.0)


def ask(system: str, question: str) -> list[Message]:
    return [Message("system", system), Message("user", question)]


@embedded
def test_interleaved_cells_evaluate_their_shared_prefix_once(embedded_backend: EmbeddedBackend,
                                                            tmp_path: Path) -> None:
    backend = embedded_backend
    backend.load()
    loaded = backend._loaded
    assert loaded is not None
    questions = ["What is 2 + 3?", "What is 7 + 1?"]
    calls = [ask(PLAYBOOK if i % 2 == 0 else OTHER, questions[i // 2]) for i in range(4)]  # two cells interleaved

    saved = loaded.prefix
    try:
        loaded.prefix = PrefixReuse(capacity=0)  # off: every interleaved call evaluates its whole prompt
        loaded.llm.reset()
        plain = [backend.complete(m, GREEDY) for m in calls]
        loaded.prefix = PrefixReuse(capacity=512 << 20)
        loaded.llm.reset()
        store = RunStore(tmp_path / "run")
        role = RoleModel(role="solver", model_name="small", backend=backend, spec=ModelSpec(backend="embedded"),
                         store=store, cache=None)
        reused = [role.complete(m, GREEDY) for m in calls]
    finally:
        loaded.prefix = saved
    sent = [c.usage.input_tokens for c in plain]
    # without kept prefixes only the chat template's opening tokens are shared from one call to the next
    assert all(0.95 * s < c.extra["input_tokens_evaluated"] <= s for c, s in zip(plain, sent, strict=True))
    # the first call of each cell evaluates (nearly) everything; later ones only their question and the template's tail
    rows = store.query("SELECT input_tokens, input_tokens_evaluated FROM calls ORDER BY id")
    evaluated = [int(r["input_tokens_evaluated"]) for r in rows]
    assert [int(r["input_tokens"]) for r in rows] == sent
    assert all(e > 0.95 * s for e, s in zip(evaluated[:2], sent[:2], strict=True))
    assert all(e < 0.3 * s for e, s in zip(evaluated[2:], sent[2:], strict=True))
    assert [c.text for c in reused] == [c.text for c in plain]  # greedy answers do not depend on the reuse


@embedded
def test_batched_calls_restore_and_keep_prefixes_too(embedded_backend: EmbeddedBackend) -> None:
    import threading

    from evoarena.models import embedded_batch
    from evoarena.models.embedded import _SAMPLER as embedded_sampler

    backend = embedded_backend
    backend.load()
    loaded = backend._loaded
    assert loaded is not None
    calls = [ask(PLAYBOOK if i % 2 == 0 else OTHER, q) for q in ("What is 2 + 3?", "What is 9 - 4?",
                                                                 "What is 6 + 6?") for i in range(2)]
    saved = loaded.prefix
    try:
        loaded.prefix = PrefixReuse(capacity=0)
        alone = [backend.complete_alone(m, GREEDY) for m in calls]
        loaded.prefix = PrefixReuse(capacity=512 << 20)
        loaded.llm.reset()
        gate = embedded_batch.gate_for(loaded, embedded_sampler)
        batched_before = gate.batched_calls
        got: dict[int, object] = {}

        def run(i: int) -> None:
            got[i] = backend.complete(calls[i], GREEDY)

        # in each wave the first call runs alone and the others, finding the model busy, are decoded together
        for wave in ((0, 1, 2), (3, 4, 5)):
            threads = [threading.Thread(target=run, args=(i,)) for i in wave]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        loaded.prefix = saved
    assert gate.batched_calls > batched_before
    done = [got[i] for i in range(6)]
    assert [c.text for c in done] == [c.text for c in alone]  # type: ignore[attr-defined]
    # the second wave: the two calls decoded together restore the batch context's kept prefixes (the lone one finds
    # only its own context's state of the other playbook)
    reused = [c for c in done[3:] if c.extra["input_tokens_evaluated"] < 0.3 * c.usage.input_tokens]  # type: ignore[attr-defined]
    assert len(reused) >= 2
