"""Two methods for the `read_reply` tests, importable by a method's own process (tests/protocol is on the path)."""

from __future__ import annotations

from collections.abc import Mapping

from evoarena.api import Method, Parsed, PracticeContext, TaskView
from evoarena.harness import Manifest


class Fielded(Method):
    """Reads the answer after a `[[ ## answer ## ]]` header; a reply without one is unreadable."""

    name = "test_fielded"

    def read_reply(self, tree: Mapping[str, str], text: str) -> Parsed:
        head, sep, tail = text.partition("[[ ## answer ## ]]")
        return Parsed(tail.strip() + tree.get("suffix", "")) if sep else Parsed(None, "no answer field")

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        return None


class Plain(Method):
    name = "test_plain"

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        return None
