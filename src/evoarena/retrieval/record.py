"""A method's retriever: chosen by param, resolved once, and recorded in the harness and the event log."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from evoarena.retrieval.base import Retriever
from evoarena.retrieval.factory import NAMES, get_retriever

if TYPE_CHECKING:
    from evoarena.api import PracticeContext
    from evoarena.harness import HarnessWorkspace

RETRIEVER_FILE = "memory/retriever.txt"
"""Harness state: the name of the retriever that ranked this harness's memory (one line)."""


class RetrieverChoice:
    """Holds a method's `retriever` param. Resolution is lazy (`auto` imports torch when the extra is there) except
    for an explicit `embedding`, which fails at construction when the extra is missing, before any budget is spent."""

    def __init__(self, requested: str, where: str) -> None:
        if requested not in NAMES:
            raise ValueError(f"{where}: {requested!r} is not one of {', '.join(NAMES)}")
        self.requested = requested
        self._retriever: Retriever | None = None
        self._lock = threading.Lock()
        self._announced = False
        if requested == "embedding":
            self.get()

    def get(self) -> Retriever:
        with self._lock:
            if self._retriever is None:
                self._retriever = get_retriever(self.requested)
            return self._retriever

    @property
    def resolved(self) -> Retriever | None:
        """The retriever once resolved, else None (nothing retrieved or recorded yet)."""
        return self._retriever

    def write_state(self, ws: HarnessWorkspace) -> None:
        """Write `memory/retriever.txt` unless it already names this retriever."""
        name = self.get().name
        if ws.read(RETRIEVER_FILE, "").strip() != name:
            ws.write(RETRIEVER_FILE, name + "\n")

    def announce(self, ctx: PracticeContext) -> None:
        """Once per method instance (one cell): record the retriever in the harness and log a `retriever` event."""
        if self._announced:
            return
        previous = ctx.harness.read(RETRIEVER_FILE, "").strip()
        self.write_state(ctx.harness)
        payload = {"name": self.get().name, "requested": self.requested}
        if previous and previous != payload["name"]:
            payload["previous"] = previous  # a resumed cell in an environment with(out) the extra
        ctx.log("retriever", payload)
        self._announced = True
