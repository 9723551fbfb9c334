"""The narrow channel between a method and its cell's process. A request and its answer cross in `codec`'s JSON
envelope (so the cell never unpickles what a method sends, and the method gets a copy), an exception as a fresh one
of a listed type without traceback or context: nothing the method holds leads back to an object of the cell's
(benchmark, store, grader, evaluator) by attributes, closures or bound methods."""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

from evoarena.protocol.boundary import codec
from evoarena.protocol.boundary.ops import Op

R = TypeVar("R")
Answer = Callable[[Op[Any]], Any]
_Request = tuple[bytes, "queue.Queue[bytes]"]


class Caller(Protocol):
    """A method's end of the channel: a `Port` in the cell's process, a pipe in the method's own process."""

    def call(self, op: Op[R]) -> R: ...


class Port:
    """The method's end of the channel: it holds only the queue requests go into."""

    __slots__ = ("_inbox",)

    def __init__(self, inbox: queue.Queue[_Request | None]) -> None:
        self._inbox = inbox

    def call(self, op: Op[R]) -> R:
        """Send `op` and wait for its answer; a failure on the cell's side is raised here."""
        reply: queue.Queue[bytes] = queue.Queue(maxsize=1)
        self._inbox.put((codec.call(op), reply))
        msg = codec.read(reply.get(), type(op))
        if isinstance(msg, codec.Call):
            raise RuntimeError("the cell answered a request with a request")
        out: R = codec.outcome(msg)
        return out


@contextmanager
def serving(answer: Answer) -> Iterator[Port]:
    """Serve `answer` on a thread of its own (in the caller's context variables) for the duration of the block."""
    inbox: queue.Queue[_Request | None] = queue.Queue()
    thread = threading.Thread(target=contextvars.copy_context().run, args=(_serve, inbox, answer), daemon=True,
                              name="evoarena-cell-channel")
    thread.start()
    try:
        yield Port(inbox)
    finally:
        inbox.put(None)
        thread.join()


def _serve(inbox: queue.Queue[_Request | None], answer: Answer) -> None:
    while (item := inbox.get()) is not None:
        data, reply = item
        reply.put(codec.serve(data, answer))
