"""The narrow channel between a method and its cell. A request crosses as JSON (plain values only, so the cell never
unpickles what a method sends), its answer as a pickled copy and an exception as a fresh one of the same type without
traceback or context: nothing the method holds leads back to an object of the cell's (benchmark, store, grader,
evaluator) by attributes, closures or bound methods."""

from __future__ import annotations

import contextvars
import json
import pickle
import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

Handler = Callable[[str, dict[str, Any]], Any]
_Request = tuple[str, bytes, "queue.Queue[tuple[bool, bytes]]"]


class Caller(Protocol):
    """A method's end of the channel: a `Port` in the cell's process, a pipe in the method's own process."""

    def call(self, op: str, **args: Any) -> Any: ...


class Port:
    """The method's end of the channel: it holds only the queue requests go into."""

    __slots__ = ("_inbox",)

    def __init__(self, inbox: queue.Queue[_Request | None]) -> None:
        self._inbox = inbox

    def call(self, op: str, **args: Any) -> Any:
        """Send `op` with `args` and wait for the answer; a failure on the cell's side is raised here."""
        reply: queue.Queue[tuple[bool, bytes]] = queue.Queue(maxsize=1)
        self._inbox.put((op, json.dumps(args).encode(), reply))
        ok, data = reply.get()
        value = pickle.loads(data)
        if ok:
            return value
        raise value


@contextmanager
def serving(handler: Handler) -> Iterator[Port]:
    """Serve `handler` on a thread of its own (in the caller's context variables) for the duration of the block."""
    inbox: queue.Queue[_Request | None] = queue.Queue()
    thread = threading.Thread(target=contextvars.copy_context().run, args=(_serve, inbox, handler), daemon=True,
                              name="evoarena-cell-channel")
    thread.start()
    try:
        yield Port(inbox)
    finally:
        inbox.put(None)
        thread.join()


def _serve(inbox: queue.Queue[_Request | None], handler: Handler) -> None:
    while (item := inbox.get()) is not None:
        op, data, reply = item
        try:
            reply.put((True, pickle.dumps(handler(op, json.loads(data)))))
        except BaseException as err:  # noqa: BLE001 - every failure goes back to the caller, bare
            reply.put((False, pickle.dumps(bare(err))))


def bare(err: BaseException) -> BaseException:
    """`err` rebuilt from its type and arguments: no traceback, no cause, no attributes of the original."""
    try:
        clean = type(err)(*err.args)
        pickle.loads(pickle.dumps(clean))
    except Exception:  # noqa: BLE001 - a type that cannot be rebuilt from its args
        clean = RuntimeError(f"{type(err).__name__}: {err}")
    return clean
