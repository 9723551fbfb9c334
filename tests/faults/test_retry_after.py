"""A real HTTP server on 127.0.0.1 answers 429 with `Retry-After` (seconds, or an HTTP date), then 200: the retry
waits as long as the provider asked, never past the call's remaining timeout, and every try is in the ledger."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from faulty_endpoint import loopback

from evoarena.models import Message, ModelCallError, RoleModel
from evoarena.models.openai_backend import OpenAIBackend, retry_after_s
from evoarena.spec import ModelSpec
from evoarena.store import RunStore

OK = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
      "choices": [{"index": 0, "message": {"role": "assistant", "content": "4"}, "finish_reason": "stop"}],
      "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}


@contextmanager
def rate_limited(retry_after: Callable[[], str], limited: int = 1) -> Iterator[tuple[str, list[float]]]:
    """A server whose first `limited` requests get 429 with `Retry-After: retry_after()`; the rest 200. Yields its
    URL and the monotonic arrival time of every request."""
    arrivals: list[float] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with lock:
                arrivals.append(time.monotonic())
                n = len(arrivals)
            status, body = (429, {"error": {"message": "slow down"}}) if n <= limited else (200, OK)
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            if status == 429:
                self.send_header("Retry-After", retry_after())
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

    with loopback(Handler) as url:
        yield url, arrivals


def _model(tmp_path: Path, url: str, **spec: Any) -> tuple[RoleModel, RunStore]:
    ms = ModelSpec(backend="openai", model="m", base_url=url, **{"timeout_s": 10.0, "max_retries": 2, **spec})
    store = RunStore(tmp_path / "run")
    return RoleModel(role="solver", model_name="ep", backend=OpenAIBackend(ms), spec=ms, store=store, cache=None,
                     backoff_base_s=0.05), store


def _ledger_tries(store: RunStore) -> int:
    return sum(r["retries"] + 1 for r in store.query("SELECT retries FROM calls"))


def test_a_429_with_retry_after_seconds_is_retried_after_that_wait(tmp_path: Path) -> None:
    with rate_limited(lambda: "2") as (url, arrivals):
        model, store = _model(tmp_path, url)
        out = model.complete([Message("user", "2+2?")])
    assert out.text == "4"
    assert len(arrivals) == 2
    assert arrivals[1] - arrivals[0] >= 1.95  # the provider's 2 s, not the 0.05 s back-off
    assert _ledger_tries(store) == len(arrivals)


def test_a_retry_after_http_date_is_honoured(tmp_path: Path) -> None:
    # the date is made when the 429 is sent: 3 s ahead, at one-second resolution, so the wait is 2 to 3 s
    def in_3s() -> str:
        return format_datetime(datetime.now(UTC) + timedelta(seconds=3), usegmt=True)

    with rate_limited(in_3s) as (url, arrivals):
        model, store = _model(tmp_path, url)
        model.complete([Message("user", "2+2?")])
    assert len(arrivals) == 2
    assert 1.9 <= arrivals[1] - arrivals[0] <= 3.5
    assert _ledger_tries(store) == 2


def test_a_retry_after_past_the_calls_remaining_timeout_is_capped(tmp_path: Path) -> None:
    # timeout_s 0.5 and one retry: the call may take 1 s in all, so an asked-for hour waits at most what remains
    with rate_limited(lambda: "3600", limited=5) as (url, arrivals):
        model, store = _model(tmp_path, url, timeout_s=0.5, max_retries=1)
        start = time.monotonic()
        with pytest.raises(ModelCallError, match="HTTP 429"):
            model.complete([Message("user", "2+2?")])
        took = time.monotonic() - start
    assert len(arrivals) == 2
    assert 0.5 <= arrivals[1] - arrivals[0] <= 1.2
    assert took < 2
    assert _ledger_tries(store) == 2
    errors = [r["error"] for r in store.query("SELECT error FROM calls")]
    assert len(errors) == 1 and "HTTP 429" in errors[0] and "(Retry-After: 3600 s)" in errors[0]


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "2"}, 2.0),
    ({"retry-after": " 1.5 "}, 1.5),
    ({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, 10.0),
    ({"retry-after": "Wed, 21 Oct 2015 07:27:00 GMT"}, 0.0),  # a date in the past: no wait
    ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
    ({"retry-after": "-1"}, None),
    ({"retry-after": "nan"}, None),
    ({"retry-after": "soon"}, None),
    ({}, None),
])
def test_retry_after_values(headers: dict[str, str], expected: float | None) -> None:
    now = datetime(2015, 10, 21, 7, 28, 0, tzinfo=UTC)
    assert retry_after_s(headers, now) == expected
