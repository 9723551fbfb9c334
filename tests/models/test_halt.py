"""A halted run makes no more model calls: none at all once set, and no further try after a back-off."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from evoarena.models import (
    Completion,
    GenParams,
    Halt,
    Message,
    ProviderError,
    ResponseCache,
    RoleModel,
    RunHalted,
    Usage,
)
from evoarena.spec import ModelSpec
from evoarena.store import RunStore
from evoarena.store.calls import INTERRUPTED


class FlakyBackend:
    """Fails its first `fail_times` calls with a retryable 503, then answers; counts calls."""

    backend_name = "test"
    model_id = "test:flaky"
    endpoint = "flaky"

    def __init__(self, fail_times: int = 0) -> None:
        self.fail_times = fail_times
        self.calls = 0

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion:
        self.calls += 1
        if self.calls <= self.fail_times:
            raise ProviderError("HTTP 503 upstream busy", retryable=True, status=503)
        return Completion(text=f"answer to {messages[-1].content}", usage=Usage(10, 3))


def _model(tmp_path: Path, backend: FlakyBackend, halt: Halt, backoff_s: float) -> tuple[RoleModel, RunStore]:
    store = RunStore(tmp_path / "run")
    spec = ModelSpec(backend="openai", base_url="http://127.0.0.1:1/v1", max_retries=5)
    model = RoleModel(role="solver", model_name="m", backend=backend, spec=spec, store=store,  # type: ignore[arg-type]
                      cache=ResponseCache(tmp_path / "cache.sqlite"), backoff_base_s=backoff_s, halt=halt)
    return model, store


def test_a_halted_model_calls_nothing_and_ledgers_nothing(tmp_path: Path) -> None:
    halt = Halt()
    backend = FlakyBackend()
    model, store = _model(tmp_path, backend, halt, 0.001)
    assert model.complete([Message("user", "q")]).text == "answer to q"
    halt.set("cell x stopped")
    with pytest.raises(RunHalted, match="cell x stopped"):
        model.complete([Message("user", "other")])
    assert backend.calls == 1 and len(store.query("SELECT id FROM calls")) == 1


def test_a_halt_during_the_back_off_ends_the_retries_and_keeps_the_failed_try(tmp_path: Path) -> None:
    halt = Halt()
    backend = FlakyBackend(fail_times=99)
    model, store = _model(tmp_path, backend, halt, 600.0)  # a back-off no test could sit through
    threading.Timer(0.2, halt.set, args=("cell y stopped",)).start()
    with pytest.raises(RunHalted):
        model.complete([Message("user", "q")])
    assert backend.calls == 1
    row = store.query_one("SELECT retries, error FROM calls")
    assert row is not None and row["retries"] == 0 and "503" in row["error"] and "the run stopped" in row["error"]


class PeekingBackend(FlakyBackend):
    """Looks at the ledger while its call is being made."""

    def __init__(self, store: RunStore) -> None:
        super().__init__()
        self.store = store
        self.seen: list[dict[str, object]] = []

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion:
        self.seen = self.store.query("SELECT id, error, response_blob FROM calls")
        return super().complete(messages, params)


def test_the_ledger_row_exists_before_the_call_is_made(tmp_path: Path) -> None:
    """A kill during a call (after it may have reached the provider) leaves it in the ledger as interrupted."""
    store = RunStore(tmp_path / "run")
    backend = PeekingBackend(store)
    spec = ModelSpec(backend="openai", base_url="http://127.0.0.1:1/v1")
    model = RoleModel(role="solver", model_name="m", backend=backend, spec=spec, store=store,  # type: ignore[arg-type]
                      cache=ResponseCache(tmp_path / "cache.sqlite"))
    out = model.complete([Message("user", "q")])
    assert len(backend.seen) == 1
    assert backend.seen[0]["error"] == INTERRUPTED and backend.seen[0]["response_blob"] is None
    row = store.query_one("SELECT id, error, response_blob, input_tokens FROM calls")
    assert row is not None and row["id"] == out.call_id and row["error"] is None and row["response_blob"]
    assert row["input_tokens"] == 10
