"""Batched decoding on the embedded model (models/embedded_batch.py): calls from several threads that find the model
busy are decoded together, and each gets the answer it gets alone. Tests marked `embedded` use the real 0.5B."""

from __future__ import annotations

import threading
import time

import pytest

from evoarena.models import embedded_batch
from evoarena.models.base import Completion, GenParams, Message
from evoarena.models.embedded import _SAMPLER, EmbeddedBackend

embedded = pytest.mark.embedded


def test_parallel_reads_the_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(embedded_batch.PARALLEL_ENV, raising=False)
    assert embedded_batch.parallel() == embedded_batch.DEFAULT_PARALLEL
    monkeypatch.setenv(embedded_batch.PARALLEL_ENV, "2")
    assert embedded_batch.parallel() == 2
    monkeypatch.setenv(embedded_batch.PARALLEL_ENV, "0")
    assert embedded_batch.parallel() == 1  # 1: batching off
    monkeypatch.setenv(embedded_batch.PARALLEL_ENV, "many")
    with pytest.raises(RuntimeError, match=embedded_batch.PARALLEL_ENV):
        embedded_batch.parallel()


CALLS = [  # different prompts, lengths, stops and samplers: each must come back as it does alone
    ([Message("user", "Q: What is 2 + 2?\nA:")], GenParams(max_tokens=8, seed=1)),
    ([Message("system", "Answer in one word."), Message("user", "Name a colour.")], GenParams(max_tokens=5, seed=2)),
    ([Message("user", "Count from 1 to 20, comma separated.")], GenParams(max_tokens=24, stop=("7",), seed=3)),
    ([Message("user", "Write a haiku about the sea.")], GenParams(max_tokens=12, temperature=0.9, seed=11)),
    ([Message("user", "Say hi.")], GenParams(max_tokens=24)),  # ends at end-of-turn; unseeded: a seed is drawn
]


def _fields(c: Completion) -> tuple[object, ...]:
    seed = c.extra["seed"]
    assert isinstance(seed, int)
    return c.text, c.usage, c.finish_reason, c.extra["prompt_format"], seed if seed < 1000 else "drawn"


@embedded
def test_waiting_calls_are_batched_and_each_gets_its_own_answer(embedded_backend: EmbeddedBackend) -> None:
    assert embedded_backend._loaded is not None
    lone: list[Completion] = []
    for m, p in CALLS:  # one at a time: each runs alone, on a fresh context (no KV reused from the call before)
        embedded_backend._loaded.llm.reset()
        lone.append(embedded_backend.complete(m, p))
    alone = [_fields(c) for c in lone]
    gate = embedded_batch.gate_for(embedded_backend._loaded, _SAMPLER)
    batches, batched = gate.batches, gate.batched_calls
    assert gate.take_if_idle()  # hold the model, as a long lone call would, while the calls arrive
    results: dict[int, Completion] = {}

    def run(i: int) -> None:
        results[i] = embedded_backend.complete(*CALLS[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(CALLS))]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while len(gate.queue) < len(CALLS) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(gate.queue) == len(CALLS)
    gate.release()
    for t in threads:
        t.join(timeout=120)
    assert gate.batches == batches + 1
    assert gate.batched_calls - batched == len(CALLS)  # all five, k = 3 at a time: the others joined as calls ended
    assert [_fields(results[i]) for i in range(len(CALLS))] == alone
    assert lone[2].finish_reason == "stop" and "7" not in lone[2].text  # the stop string cut it
    assert lone[4].finish_reason == "stop" and lone[4].usage.output_tokens < 24  # end of turn


@embedded
def test_a_lone_call_is_not_batched(embedded_backend: EmbeddedBackend) -> None:
    assert embedded_backend._loaded is not None
    gate = embedded_batch.gate_for(embedded_backend._loaded, _SAMPLER)
    batched = gate.batched_calls
    embedded_backend.complete(*CALLS[0])
    assert gate.batched_calls == batched and gate.owner is None


@embedded
def test_one_waiting_call_runs_alone(embedded_backend: EmbeddedBackend) -> None:
    assert embedded_backend._loaded is not None
    gate = embedded_batch.gate_for(embedded_backend._loaded, _SAMPLER)
    batched = gate.batched_calls
    assert gate.take_if_idle()
    out: list[Completion] = []
    t = threading.Thread(target=lambda: out.append(embedded_backend.complete(*CALLS[0])))
    t.start()
    while not gate.queue:
        time.sleep(0.01)
    gate.release()
    t.join(timeout=60)
    assert gate.batched_calls == batched and out and out[0].usage.output_tokens > 0
