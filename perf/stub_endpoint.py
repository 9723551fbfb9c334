"""An OpenAI-compatible stub on 127.0.0.1 for the performance benchmarks: every chat completion waits a fixed latency
and then answers with a scripted policy named by the request's `model` (arith-student, clr-student, …), so a run
against it behaves like the scripted run, at the pace of a remote endpoint. It counts requests and the most it had
in flight at once. Not a model server (the benchmarks say so); the tests have their own stubs."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evoarena.models import GenParams, Message
from evoarena.protocol.catalog import policy


@dataclass
class Stub:
    url: str = ""
    latency_s: float = 0.2
    requests: int = 0
    in_flight: int = 0
    peak: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def enter(self) -> None:
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1


@contextmanager
def serve(latency_s: float = 0.2) -> Iterator[Stub]:
    state = Stub(latency_s=latency_s)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real servers
        disable_nagle_algorithm = True  # headers and body go out at once (no 40 ms delayed-ACK stall per call)

        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            state.enter()
            try:
                time.sleep(state.latency_s)
                messages = [Message(m["role"], m["content"]) for m in req["messages"]]
                params = GenParams(temperature=req.get("temperature", 0.0), max_tokens=req.get("max_tokens", 256),
                                   seed=req.get("seed"), stop=tuple(req.get("stop") or ()))
                text = policy(req["model"])(messages, params)
            finally:
                state.leave()
            body = {"id": "stub", "object": "chat.completion", "created": 0, "model": req["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": sum(len(m.content.split()) for m in messages),
                              "completion_tokens": len(text.split()), "total_tokens": 0}}
            payload = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
