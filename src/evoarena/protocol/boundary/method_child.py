"""The method's process under `protocol.isolation: process` (`python -m evoarena.protocol.boundary.method_child`).
It gets the method's class name, its params and its harness directory, then runs `initialize`, `practice`,
`build_messages`, `context` and its episode agents' hooks on the cell's command; every request of its context goes
back over the pipe. It is never given the test split, the grader's data, the run database or an API key."""

from __future__ import annotations

import importlib
import os
import random
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from evoarena.api import Method
from evoarena.harness import HarnessWorkspace
from evoarena.protocol.boundary.channel import bare
from evoarena.protocol.boundary.client import StepContext
from evoarena.protocol.boundary.isolated_episode import ChildAgents
from evoarena.protocol.boundary.wire import ChannelClosed, recv_pickle, send_json


class PipePort:
    """A `channel.Port` over the pipe: a request goes up as JSON, its answer comes down as a pickle. While it waits,
    the cell may send a command of its own first (the solver prompt of the attempt it was asked for: the method's
    `build_messages`), which is run and answered before the reply is read."""

    def __init__(self, up: IO[bytes], down: IO[bytes]) -> None:
        self._up, self._down = up, down
        self._lock = threading.RLock()
        self.nested: Callable[[str, list[Any]], None] = lambda command, args: None

    def call(self, op: str, **args: Any) -> Any:
        with self._lock:
            send_json(self._up, {"request": op, "args": args})
            while True:
                kind, *rest = recv_pickle(self._down)
                if kind == "reply":
                    break
                self.nested(kind, rest)
        ok, value = rest
        if ok:
            return value
        raise value


def _load(ref: str) -> type[Method]:
    module, _, qualname = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _manifest(value: Any) -> dict[str, Any] | None:
    return None if value is None else {"intent": value.intent, "evidence": value.evidence,
                                       "expected_fixes": list(value.expected_fixes),
                                       "expected_regressions": list(value.expected_regressions)}


def serve(down: IO[bytes], up: IO[bytes]) -> None:
    kind, hello = recv_pickle(down)
    assert kind == "hello"
    sys.path[:0] = [p for p in hello["sys_path"] if p not in sys.path]
    method = _load(hello["method"])(**hello["params"])
    ws = HarnessWorkspace(hello["harness"])
    port = PipePort(up, down)
    agents = ChildAgents(method, port)

    def answer(command: str, args: list[Any]) -> None:
        try:
            if command in ChildAgents.COMMANDS:
                send_json(up, {"done": agents.run(command, args)})
                return
            send_json(up, {"done": _run(method, ws, port, command, args)})
        except BaseException as err:  # noqa: BLE001 - reported to the cell, which decides
            clean = bare(err)
            send_json(up, {"error": type(clean).__name__, "message": str(clean)})

    port.nested = answer
    send_json(up, {"done": None})
    while True:
        try:
            command, *args = recv_pickle(down)
        except ChannelClosed:
            return
        if command == "stop":
            return
        answer(command, args)


def _run(method: Method, ws: HarnessWorkspace, port: PipePort, command: str, args: list[Any]) -> Any:
    if command == "initialize":
        system_prompt, solver_params = args
        method.initialize(ws, system_prompt, solver_params)
        return None
    if command == "practice":
        step, task = args
        rng = random.Random()
        rng.setstate(step["rng"])
        ctx = StepContext(port=port, harness=ws, roles=step["roles"], train=step["train"], val=step["val"],
                          rng=rng, step=step["step"], update_note=step["update_note"],
                          attempt_limit=step["attempt_limit"], function_calling=step["function_calling"])
        return _manifest(method.practice(ctx, task))
    if command == "build_messages":
        tree, task_text, task = args
        return [[m.role, m.content] for m in method.build_messages(tree, task_text, task)]
    if command == "context":
        tree, task = args
        return method.context(tree, task)
    raise ValueError(f"unknown command {command!r}")


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
