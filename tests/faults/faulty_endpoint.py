"""A stdlib OpenAI-compatible server on 127.0.0.1 whose answers come from a scripted policy and which, on a seeded
share of requests, misbehaves the way real endpoints do (500, 429, a hang past the client's timeout, truncated JSON,
empty `choices`, a choice without a message). It counts every request it receives."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evoarena.models import GenParams, Message
from evoarena.scripted.arith import arith_student

FAULTS = ("500", "429", "hang", "truncated", "empty_choices", "no_message")


@dataclass
class Endpoint:
    url: str = ""
    rate: float = 0.0  # share of requests that get a fault
    seed: int = 0
    kinds: Sequence[str] = FAULTS
    hang_s: float = 3.0
    delay_s: float = 0.0  # every answer takes this long (so a kill often lands mid-call)
    echo_auth: bool = False  # a careless server: its error bodies repeat the request's Authorization header
    requests: int = 0
    served: Counter[str] = field(default_factory=Counter)  # "ok" or the fault's name -> requests
    _seen: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def decide(self, body: bytes) -> str:
        """The fault (or "ok") for this request. Whether it is faulted hashes the seed, the body and how often that
        body came before (so it does not depend on the order parallel cells send in); the faults take the kinds in
        turn, so a short run meets every kind."""
        with self._lock:
            self.requests += 1
            digest = hashlib.sha256(body).hexdigest()
            nth = self._seen[digest]
            self._seen[digest] += 1
        h = int.from_bytes(hashlib.sha256(f"{self.seed}:{digest}:{nth}".encode()).digest()[:8], "big")
        with self._lock:
            faults = sum(n for k, n in self.served.items() if k != "ok")
            kind = "ok" if (h % 10_000) / 10_000 >= self.rate else self.kinds[faults % len(self.kinds)]
            self.served[kind] += 1
        return kind


def _completion(text: str, model: str) -> dict[str, Any]:
    return {"id": "chatcmpl-faulty", "object": "chat.completion", "created": 1_700_000_000, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


@contextmanager
def serve(**settings: Any) -> Iterator[Endpoint]:
    state = Endpoint(**settings)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            kind = state.decide(raw)
            time.sleep(state.delay_s)
            if kind == "hang":
                time.sleep(state.hang_s)
                return self._send(500, b'{"error": "late"}')
            if kind in ("500", "429"):
                said = f" (you sent {self.headers.get('Authorization')})" if state.echo_auth else ""
                return self._send(int(kind), json.dumps({"error": {"message": f"fault {kind}{said}"}}).encode())
            req = json.loads(raw)
            if kind == "empty_choices":
                return self._send(200, json.dumps({**_completion("", req["model"]), "choices": []}).encode())
            if kind == "no_message":
                body = _completion("", req["model"])
                del body["choices"][0]["message"]
                return self._send(200, json.dumps(body).encode())
            messages = [Message(m["role"], m["content"]) for m in req["messages"]]
            params = GenParams(temperature=req.get("temperature", 0.0), max_tokens=req.get("max_tokens", 256),
                               seed=req.get("seed"))
            payload = json.dumps(_completion(arith_student(messages, params), req["model"])).encode()
            self._send(200, payload[: len(payload) // 2] if kind == "truncated" else payload)

        def _send(self, status: int, payload: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
                pass

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

    with loopback(Handler) as url:
        state.url = url
        yield state


@contextmanager
def loopback(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve `handler` on a free port of 127.0.0.1 for the block; yields the OpenAI-style base URL (…/v1)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def model_spec(url: str, **overrides: Any) -> dict[str, Any]:
    """The spec's `models:` entry for this endpoint."""
    return {"backend": "openai", "model": "arith-student", "base_url": url, "max_retries": 1, "timeout_s": 2.0,
            **overrides}
