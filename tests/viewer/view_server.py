"""The viewer on 127.0.0.1 for a test: uvicorn in a thread on a free port, stopped on exit."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any


class Server:
    def __init__(self, paths: list[Path]) -> None:
        import uvicorn

        from evoarena.viewer import create_app

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.app = create_app(paths)
        self._server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Server:
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the viewer did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self.app.state.catalog.close()
