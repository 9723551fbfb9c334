"""An OpenAI-compatible stub on 127.0.0.1 for the performance benchmarks: every chat completion waits a fixed latency
(0: none) and then answers with a scripted policy named by the request's `model` (arith-student, clr-student, …), so a
run against it behaves like the scripted run, at the pace of a remote endpoint. It counts requests and the most it had
in flight at once (`GET /stats`). Not a model server (the benchmarks say so); the tests have their own stubs.

It runs in its own process (uvicorn, one event loop: a waiting call holds no thread), so the measuring process pays
only for its own side of each call. `serve()` starts it and stops it; run alone it prints its URL and serves:
    python perf/stub_endpoint.py [--latency 0.2] [--port 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


@dataclass
class Stub:
    """The running stub's address, and after it stopped what it counted."""

    url: str = ""
    latency_s: float = 0.2
    requests: int = 0
    peak: int = 0

    def read_stats(self) -> None:
        with urllib.request.urlopen(self.url.removesuffix("/v1") + "/stats", timeout=10) as resp:
            stats = json.loads(resp.read())
        self.requests, self.peak = int(stats["requests"]), int(stats["peak"])


@contextmanager
def serve(latency_s: float = 0.2) -> Iterator[Stub]:
    """The stub in a child process on a free port; on exit its counts are read into the yielded `Stub`."""
    proc = subprocess.Popen([sys.executable, str(HERE / "stub_endpoint.py"), "--latency", str(latency_s),
                             "--exit-with-stdin"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout is not None else ""
        if not line.startswith("http://"):
            raise RuntimeError(f"stub endpoint did not start (said {line!r})")
        state = Stub(url=line.strip(), latency_s=latency_s)
        state.read_stats()  # answers once the server runs: no first call pays its start
        yield state
        state.read_stats()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


class App:
    """A bare ASGI app: POST …/chat/completions answers after the latency; GET /stats returns the counts."""

    def __init__(self, latency_s: float, models: tuple[str, ...] = ()) -> None:
        from evoarena.protocol.catalog import policy

        self.latency_s = latency_s
        self.policy = policy
        for name in models:  # resolved (imported) now, not on the first call
            policy(name)
        self.requests = self.in_flight = self.peak = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] == "GET":
            await _reply(send, {"requests": self.requests, "peak": self.peak})
            return
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        req = json.loads(body)
        self.requests += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            await _reply(send, self.answer(req))
        finally:
            self.in_flight -= 1

    def answer(self, req: dict[str, Any]) -> dict[str, Any]:
        from evoarena.models import GenParams, Message

        messages = [Message(m["role"], m["content"]) for m in req["messages"]]
        params = GenParams(temperature=req.get("temperature", 0.0), max_tokens=req.get("max_tokens", 256),
                           seed=req.get("seed"), stop=tuple(req.get("stop") or ()))
        text = self.policy(req["model"])(messages, params)
        return {"id": "stub", "object": "chat.completion", "created": 0, "model": req["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": sum(len(m.content.split()) for m in messages),
                          "completion_tokens": len(text.split()), "total_tokens": 0}}


async def _reply(send: Any, body: dict[str, Any]) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})


def main() -> None:
    import uvicorn

    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--exit-with-stdin", action="store_true", help="exit when stdin closes (its parent died)")
    ap.add_argument("--models", default="arith-student,clr-student", help="policies to load before serving")
    args = ap.parse_args()
    if args.exit_with_stdin:
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on such sockets, and without it every reply (headers,
    # then body) stalls ~40 ms on the client's delayed ACK
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(1024)  # connections queue from here on: the URL is printed only once they can
    app = App(args.latency, tuple(m for m in args.models.split(",") if m))
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            backlog=1024, timeout_keep_alive=60)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
