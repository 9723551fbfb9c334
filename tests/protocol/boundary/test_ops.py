"""Adding a `ctx` capability is one op type and one handler (plus the client's method): a throwaway op defined here
is answered by its handler through the in-process channel and through the pipe's framing alike, by its type."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import pytest

from evoarena.api import Feedback
from evoarena.protocol.boundary import codec
from evoarena.protocol.boundary.channel import Caller, serving
from evoarena.protocol.boundary.method_child import PipePort
from evoarena.protocol.boundary.ops import OPS, Grade, Label, Op, Server, handles
from evoarena.protocol.boundary.wire import ChannelClosed, recv_frame, send_frame


class Shout(Op[str]):
    """The throwaway capability: the text, upper-cased, `times` times."""

    op: Literal["test_shout"] = "test_shout"
    text: str
    times: int = 1


class Cell(Server):
    @handles(Shout)
    def _shout(self, op: Shout) -> str:
        return op.text.upper() * op.times

    @handles(Grade)
    def _grade(self, op: Grade) -> Feedback:
        if op.number < 1:
            raise KeyError(op.task_id)
        return Feedback(1.0, True, f"graded {op.answer}")


def shout(port: Caller, text: str, times: int = 1) -> str:
    """The client's method, as `StepContext` would have it."""
    return port.call(Shout(text=text, times=times))


@contextmanager
def piped(server: Server) -> Iterator[PipePort]:
    """A `PipePort` whose other end is a thread answering as `IsolatedMethod._exchange` does, over real pipes."""
    up_r, up_w = os.pipe()
    down_r, down_w = os.pipe()
    with open(up_r, "rb", buffering=0) as up_in, open(up_w, "wb", buffering=0) as up_out, \
            open(down_r, "rb", buffering=0) as down_in, open(down_w, "wb", buffering=0) as down_out:

        def cell() -> None:
            while True:
                try:
                    data = recv_frame(up_in)
                except ChannelClosed:
                    return
                send_frame(down_out, codec.serve(data, server.answer))

        thread = threading.Thread(target=cell, daemon=True)
        thread.start()
        yield PipePort(up_out, down_in)
        up_out.close()
        thread.join(timeout=5)


@pytest.mark.parametrize("transport", ["in process", "pipe"])
def test_a_new_op_is_answered_by_its_handler_through_both_transports(transport: str) -> None:
    assert OPS["test_shout"] is Shout and Shout.reply is str
    with (serving(Cell().answer) if transport == "in process" else piped(Cell())) as port:
        assert shout(port, "hey", times=2) == "HEYHEY"
        assert port.call(Grade(task_id="t", answer="4", number=1)) == Feedback(1.0, True, "graded 4")
        with pytest.raises(KeyError, match="'t'"):  # a fresh exception of the listed type
            port.call(Grade(task_id="t", answer="4", number=0))
        with pytest.raises(ValueError, match="unknown request Label"):  # the cell answers only what it handles
            port.call(Label(task_id="t"))


def test_an_ops_name_is_its_own() -> None:
    with pytest.raises(TypeError, match="no other op has"):
        class Again(Op[str]):
            op: Literal["test_shout"] = "test_shout"


def test_a_server_finds_its_bases_handlers() -> None:
    class Louder(Cell):
        @handles(Label)
        def _label(self, op: Label) -> str:
            return "ref"

    assert Louder().answer(Label(task_id="t")) == "ref" and Louder().answer(Shout(text="a")) == "A"
    assert Label not in Cell._handlers


def test_the_architecture_pages_example_is_the_code() -> None:
    """docs/architecture.md § Adding a ctx capability shows `Label`'s op, handler and client method as they are."""
    root = Path(__file__).resolve().parents[3]
    section = (root / "docs/architecture.md").read_text().partition("### Adding a ctx capability")[2]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    sources = [root / "src/evoarena/protocol/boundary" / f for f in ("ops.py", "client.py")]
    sources.append(root / "src/evoarena/protocol/run/step_service.py")
    assert len(blocks) == 3
    for block, source in zip(blocks, [sources[0], sources[2], sources[1]], strict=True):
        assert block in source.read_text(), block
