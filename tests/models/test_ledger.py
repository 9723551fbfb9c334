"""The ledger wrapper: cache, retries, errors, budgets and concurrency, with in-test backends."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from evoarena.models import (
    CallScope,
    Completion,
    GenParams,
    Message,
    ModelCallError,
    ProviderError,
    ResponseCache,
    RoleModel,
    Usage,
    attributed,
)
from evoarena.protocol.budget import BudgetExhausted, BudgetMeter
from evoarena.spec import Budget, ModelSpec, Price
from evoarena.store import RunStore


class FlakyBackend:
    """Fails `fail_times` times with the given error, then answers."""

    backend_name = "test"
    model_id = "test:flaky"

    def __init__(self, fail_times: int = 0, retryable: bool = True, endpoint: str = "flaky") -> None:
        self.fail_times = fail_times
        self.retryable = retryable
        self.endpoint = endpoint
        self.calls = 0
        self.active = 0
        self.max_active = 0
        self._lock = threading.Lock()

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion:
        with self._lock:
            self.calls += 1
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            time.sleep(0.01)
            if self.calls <= self.fail_times:
                raise ProviderError("HTTP 503 upstream busy", retryable=self.retryable, status=503)
            return Completion(text=f"answer to {messages[-1].content}", usage=Usage(10, 3))
        finally:
            with self._lock:
                self.active -= 1


def make(tmp_path: Path, backend: FlakyBackend, **spec_kw: object) -> tuple[RoleModel, RunStore]:
    store = RunStore(tmp_path / "run")
    spec = ModelSpec(backend="openai", base_url="http://127.0.0.1:1/v1", **spec_kw)  # type: ignore[arg-type]
    model = RoleModel(role="solver", model_name="m", backend=backend, spec=spec, store=store,  # type: ignore[arg-type]
                      cache=ResponseCache(tmp_path / "cache.sqlite"), backoff_base_s=0.001)
    return model, store


def test_cache_hit_is_counted_as_cached_with_its_tokens(tmp_path: Path) -> None:
    backend = FlakyBackend()
    model, store = make(tmp_path, backend, price=Price(input_per_mtok=1e6, output_per_mtok=2e6))
    msgs = [Message("user", "q1")]
    first = model.complete(msgs)
    second = model.complete(msgs)
    assert first == second and backend.calls == 1
    rows = store.query("SELECT cached, input_tokens, output_tokens, cost_usd FROM calls ORDER BY id")
    assert [r["cached"] for r in rows] == [0, 1]
    assert all(r["input_tokens"] == 10 and r["output_tokens"] == 3 for r in rows)
    assert rows[0]["cost_usd"] == pytest.approx(10 + 6)
    model.complete(msgs, sample_index=1)  # another sample is another key
    assert backend.calls == 2


def test_retryable_errors_are_retried_then_succeed(tmp_path: Path) -> None:
    backend = FlakyBackend(fail_times=2)
    model, store = make(tmp_path, backend, max_retries=3)
    assert model.complete([Message("user", "q")]).text == "answer to q"
    row = store.query_one("SELECT retries, error FROM calls")
    assert row == {"retries": 2, "error": None}


def test_exhausted_retries_are_recorded_as_an_error_and_not_cached(tmp_path: Path) -> None:
    backend = FlakyBackend(fail_times=99)
    model, store = make(tmp_path, backend, max_retries=2)
    with pytest.raises(ModelCallError, match="failed after 3 tries"):
        model.complete([Message("user", "q")])
    assert backend.calls == 3
    row = store.query_one("SELECT error, cached FROM calls")
    assert row is not None and "503" in row["error"] and row["cached"] == 0
    key = store.query("SELECT cache_key FROM calls")[0]["cache_key"]
    assert model.cache is not None and model.cache.get(key) is None


def test_non_retryable_error_is_not_retried(tmp_path: Path) -> None:
    backend = FlakyBackend(fail_times=1, retryable=False)
    model, _ = make(tmp_path, backend, max_retries=5)
    with pytest.raises(ModelCallError):
        model.complete([Message("user", "q")])
    assert backend.calls == 1


def test_budget_refuses_calls_past_the_limit(tmp_path: Path) -> None:
    backend = FlakyBackend()
    model, store = make(tmp_path, backend)
    meter = BudgetMeter(Budget(max_calls=2))
    scoped = model.scoped(CallScope(cell="c", phase="practice", meter=meter))
    scoped.complete([Message("user", "a")])
    scoped.complete([Message("user", "b")])
    with pytest.raises(BudgetExhausted):
        scoped.complete([Message("user", "c")])
    assert meter.calls == 2 and meter.tokens == 26 and meter.exhausted()
    assert len(store.query("SELECT id FROM calls WHERE cell='c'")) == 2


@pytest.mark.parametrize(("greedy_ignores_seed", "temperature", "backend_calls"),
                         [(True, 0.0, 1), (True, 0.7, 2), (False, 0.0, 2)])
def test_greedy_calls_share_a_cache_entry_across_seeds_only_where_the_backend_says_so(
    tmp_path: Path, greedy_ignores_seed: bool, temperature: float, backend_calls: int
) -> None:
    backend = FlakyBackend()
    backend.greedy_ignores_seed = greedy_ignores_seed  # type: ignore[attr-defined]
    model, store = make(tmp_path, backend)
    for seed in (0, 1):
        model.complete([Message("user", "q")], GenParams(temperature=temperature, seed=seed))
    assert backend.calls == backend_calls
    rows = store.query("SELECT params, cached FROM calls ORDER BY id")
    assert [json.loads(r["params"])["seed"] for r in rows] == [0, 1]  # the ledger keeps the seed each call asked for
    assert [r["cached"] for r in rows] == [0, int(backend_calls == 1)]


def test_a_call_is_in_the_ledger_before_its_response_is_cached(tmp_path: Path) -> None:
    """A kill after the provider answered and before the cache write (here: the cache write itself dies) leaves the
    billed call in the ledger; resuming then calls again, and that call is ledgered too."""

    class Killed(BaseException):
        pass

    class DyingCache(ResponseCache):
        def put(self, key: str, completion: Completion) -> None:
            raise Killed

    backend = FlakyBackend()
    model, store = make(tmp_path, backend)
    model.cache = DyingCache(tmp_path / "dying.sqlite")
    with pytest.raises(Killed):
        model.complete([Message("user", "q")])
    rows = store.query("SELECT cached, error FROM calls")
    assert backend.calls == 1 and [(r["cached"], r["error"]) for r in rows] == [(0, None)]


def test_the_embedded_backend_declares_greedy_decoding_seed_free() -> None:
    from evoarena.models.embedded import EmbeddedBackend

    assert EmbeddedBackend.greedy_ignores_seed is True


def test_an_ambient_model_files_its_calls_under_the_attributed_cell(tmp_path: Path) -> None:
    model, store = make(tmp_path, FlakyBackend())
    judge = model.scoped(CallScope(phase="grading", ambient=True))
    other = model.scoped(CallScope(phase="probe"))
    judge.complete([Message("user", "outside")])
    with attributed(CallScope(cell="c1", phase="ignored", unit="test/v1")):
        judge.complete([Message("user", "inside")])
        other.complete([Message("user", "not ambient")])
        done = threading.Event()  # a context variable does not leak into a thread started without it
        threading.Thread(target=lambda: (judge.complete([Message("user", "thread")]), done.set())).start()
        assert done.wait(5)
    rows = store.query("SELECT cell, phase, unit FROM calls ORDER BY id")
    assert [(r["cell"], r["phase"], r["unit"]) for r in rows] == [(None, "grading", None), ("c1", "grading", "test/v1"),
                                        (None, "probe", None), (None, "grading", None)]


def test_concurrency_limit_per_endpoint(tmp_path: Path) -> None:
    backend = FlakyBackend(endpoint=f"limited-{tmp_path.name}")
    model, _ = make(tmp_path, backend, concurrency=2)
    threads = [threading.Thread(target=model.complete, args=([Message("user", f"q{i}")],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert backend.calls == 8 and backend.max_active <= 2


class SeedEcho(FlakyBackend):
    """Answers with the seed it was called with."""

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion:
        return Completion(text=f"seed {params.seed}", usage=Usage(1, 2))


def test_each_sample_of_a_seeded_call_draws_with_its_own_seed(tmp_path: Path) -> None:
    model, store = make(tmp_path, SeedEcho())
    msgs = [Message("user", "q")]
    seeded = GenParams(temperature=0.7, seed=3)
    texts = [model.complete(msgs, seeded, sample_index=i).text for i in range(4)]
    assert texts[0] == "seed 3" and len(set(texts)) == 4  # sample 0 keeps the run's seed
    assert model.complete(msgs, seeded, sample_index=2).text == texts[2]  # reproducible (and cached)
    recorded = [json.loads(r["params"])["seed"] for r in store.query("SELECT params FROM calls ORDER BY id")]
    assert [f"seed {s}" for s in recorded[:4]] == texts  # the ledger holds the seed actually used
    assert model.complete(msgs, GenParams(temperature=0.7), sample_index=1).text == "seed None"  # unseeded stays so


class TemplatedBackend(FlakyBackend):
    """A backend that, like the embedded one, says how it turned the messages into a prompt."""

    model_id = "test:templated"

    def __init__(self, prompt_format: str) -> None:
        super().__init__()
        self.prompt_format = prompt_format

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion:
        done = super().complete(messages, params)
        return Completion(done.text, done.usage, extra={"prompt_format": self.prompt_format})


def test_the_ledger_records_the_prompt_format_also_for_cached_calls(tmp_path: Path) -> None:
    from evoarena.store import find_calls

    model, store = make(tmp_path, TemplatedBackend("chat-template"))
    msgs = [Message("user", "q1")]
    model.complete(msgs)
    model.complete(msgs)  # a cache hit: the cached completion carries no extra, the backend still says it
    plain, _ = make(tmp_path / "other", TemplatedBackend("plain"))
    plain.store = store
    plain.complete([Message("user", "q2")])
    untold, _ = make(tmp_path / "third", FlakyBackend())  # sends messages as they are (openai, scripted)
    untold.store = store
    untold.complete([Message("user", "q3")])
    rows = store.query("SELECT cached, prompt_format FROM calls ORDER BY id")
    assert [(r["cached"], r["prompt_format"]) for r in rows] == [(0, "chat-template"), (1, "chat-template"),
                                                                  (0, "plain"), (0, None)]
    assert [c.prompt_format for c in find_calls(store)] == ["chat-template", "chat-template", "plain", None]


class ReusingBackend(FlakyBackend):
    """Says how many of its 10 prompt tokens it computed (the rest reused), as the embedded backend does."""

    reports_evaluated_tokens = True

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion:
        done = super().complete(messages, params)
        return Completion(text=done.text, usage=done.usage, extra={"input_tokens_evaluated": 4})


def test_the_ledger_records_prompt_tokens_computed_none_for_a_cache_hit(tmp_path: Path) -> None:
    from evoarena.store import find_calls

    model, store = make(tmp_path, ReusingBackend())
    msgs = [Message("user", "q1")]
    model.complete(msgs)
    model.complete(msgs)  # a cache hit computes nothing
    untold, _ = make(tmp_path / "other", FlakyBackend())  # a backend that does not say, even for its cache hits
    untold.store = store
    untold.complete([Message("user", "q2")])
    untold.complete([Message("user", "q2")])
    assert [(c.input_tokens, c.input_tokens_evaluated) for c in find_calls(store)] == [(10, 4), (10, 0), (10, None),
                                                                                       (10, None)]
