"""A method that leaves its cell a harness no version may hold: a FIFO, a sparse 300 MiB file, bytes that are not
UTF-8, a name with a lone surrogate, a socket, a symlink, a 2,000-byte file (for a low cap), or a candidate version
with a climbing or absolute name. It writes with the OS's own calls, past the harness API, as a method in its own
process can. Imported by name, so that a method's own process can import it too; with the helpers its tests use to
fail, rather than hang, on a read that blocks."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import Method, PracticeContext, TaskView, method
from evoarena.harness import Manifest

BIG = 300 * 2**20


def plant(root: Path, what: str) -> None:
    """Leave `what` in the harness directory `root`."""
    if what == "fifo":
        os.mkfifo(root / "memory.fifo")
    elif what == "big":
        with open(root / "big.md", "wb") as fh:
            fh.truncate(BIG)  # sparse: no disk is used
    elif what == "binary":
        (root / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    elif what == "surrogate":
        with open(os.path.join(os.fsencode(root), b"bad\xffname.md"), "wb") as fh:
            fh.write(b"text\n")
    elif what == "socket":
        fd = os.open(root, os.O_RDONLY)
        try:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.bind(f"/proc/self/fd/{fd}/s.sock")  # a short name for a deep directory
        finally:
            os.close(fd)
    elif what == "symlink":
        os.symlink("/etc/hostname", root / "link.md")
    elif what == "2k":
        (root / "notes.md").write_text("x" * 2000)
    else:
        raise ValueError(f"nothing to plant called {what!r}")


@method("test-harness-planter")
class Planter(Method):
    """Practises like frozen and, at its first step, plants `plant` in its harness (or, for `candidate-dotdot` and
    `candidate-absolute`, proposes a candidate version holding such a name); with `rollout`, then asks for a
    rollout on the live harness, which the cell reads there and then."""

    defaults = {"plant": "fifo", "rollout": False}

    def __init__(self, plant: str = "fifo", rollout: bool = False) -> None:
        self.plant = plant
        self.rollout = rollout

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if self.plant == "candidate-dotdot":
            ctx.candidate({"system.md": "x", "../escaped.md": "out"}, parents=[], intent="climb")
        elif self.plant == "candidate-absolute":
            ctx.candidate({"system.md": "x", "/tmp/escaped.md": "out"}, parents=[], intent="absolute")
        else:
            plant(Path(ctx.harness.root), self.plant)
        if self.rollout:
            ctx.rollout(task)
        return Manifest(intent=f"planted {self.plant}")


def within(seconds: float, fn: Callable[[], Any], unblock: Callable[[], None] = lambda: None) -> Any:
    """`fn()`, failing the test (not hanging the suite) if it has not returned after `seconds`; then `unblock` frees
    the thread it left waiting."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as err:  # noqa: BLE001 - handed to the test's thread
            out["error"] = err

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        unblock()
        thread.join(5)
        pytest.fail(f"still blocked after {seconds} s")
    if "error" in out:
        raise out["error"]
    return out.get("value")


def release(*fifos: Path) -> Callable[[], None]:
    """Open each FIFO for writing and close it: a reader blocked on it gets end-of-file."""
    def unblock() -> None:
        for fifo in fifos:
            with contextlib.suppress(OSError):  # no reader waits on it
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    return unblock
