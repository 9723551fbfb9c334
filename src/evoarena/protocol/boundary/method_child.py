"""The method's process under `protocol.isolation: process` (`python -m evoarena.protocol.boundary.method_child`).
It gets the method's class name, its params and its harness directory (`ops.Hello`), then runs `initialize`,
`practice`, `build_messages`, `context` and its episode agents' hooks on the cell's command; every request of its
context goes back over the pipe. It is never given the test split, the grader's data, the run database or an API
key."""

from __future__ import annotations

import importlib
import os
import sys
import threading
from pathlib import Path
from typing import IO, Any, TypeVar

from evoarena.api import Method, Parsed
from evoarena.harness import HarnessWorkspace, Manifest
from evoarena.models import Message
from evoarena.protocol.boundary import codec
from evoarena.protocol.boundary.channel import Answer
from evoarena.protocol.boundary.client import rebuilt
from evoarena.protocol.boundary.isolated_episode import ChildAgents
from evoarena.protocol.boundary.ops import (
    BuildMessages,
    ContextText,
    Hello,
    Initialize,
    Op,
    Practice,
    ReadReply,
    Stop,
    handles,
)
from evoarena.protocol.boundary.wire import ChannelClosed, recv_frame, send_frame

R = TypeVar("R")


class PipePort:
    """A `channel.Port` over the pipe. While it waits for its answer, the cell may send a command of its own first
    (the solver prompt of the attempt it was asked for: the method's `build_messages`), which `answer` runs and
    answers before the reply is read."""

    def __init__(self, up: IO[bytes], down: IO[bytes]) -> None:
        self._up, self._down = up, down
        self._lock = threading.RLock()
        self.answer: Answer = lambda op: None

    def call(self, op: Op[R]) -> R:
        with self._lock:
            send_frame(self._up, codec.call(op))
            while isinstance(msg := codec.read(recv_frame(self._down), type(op)), codec.Call):
                send_frame(self._up, codec.answer(msg.op, self.answer))
        out: R = codec.outcome(msg)
        return out


class ChildMethod(ChildAgents):
    """The method's side of the pipe: its `Method` hooks (and its episode agents'), on the cell's commands."""

    def __init__(self, method: Method, ws: HarnessWorkspace, port: PipePort) -> None:
        super().__init__(method, port)
        self._ws, self._pipe = ws, port

    @handles(Initialize)
    def _initialize(self, op: Initialize) -> None:
        self._method.initialize(self._ws, op.system_prompt, op.solver_params)

    @handles(Practice)
    def _practice(self, op: Practice) -> Manifest | None:
        return self._method.practice(rebuilt(op.step, self._pipe, self._ws), op.task)

    @handles(BuildMessages)
    def _build_messages(self, op: BuildMessages) -> list[Message]:
        return self._method.build_messages(op.tree, op.task_text, op.task)

    @handles(ReadReply)
    def _read_reply(self, op: ReadReply) -> Parsed:
        return self._method.read_reply(op.tree, op.text)

    @handles(ContextText)
    def _context(self, op: ContextText) -> str:
        return self._method.context(op.tree, op.task)


def _load(ref: str) -> type[Method]:
    module, _, qualname = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def serve(down: IO[bytes], up: IO[bytes]) -> None:
    hello = codec.read(recv_frame(down))
    assert isinstance(hello, codec.Call) and isinstance(hello.op, Hello)
    sys.path[:0] = [p for p in hello.op.sys_path if p not in sys.path]
    port = PipePort(up, down)
    child = ChildMethod(_load(hello.op.method)(**hello.op.params), HarnessWorkspace(Path(hello.op.harness)), port)
    port.answer = child.answer
    send_frame(up, codec.answer(hello.op, lambda op: None))
    while True:
        try:
            msg = codec.read(recv_frame(down))
        except ChannelClosed:
            return
        if not isinstance(msg, codec.Call) or isinstance(msg.op, Stop):
            return
        send_frame(up, codec.answer(msg.op, child.answer))


def main() -> None:
    # the protocol keeps the process's real stdin/stdout; the method's own prints go to stderr
    down = os.fdopen(os.dup(0), "rb", buffering=0)
    up = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(down, up)


if __name__ == "__main__":
    main()
