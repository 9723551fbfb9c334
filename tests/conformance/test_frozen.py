"""`frozen`, the floor, against its sources: seed 003 (`/work/shared/seeds/003_9ce758357ab44640.txt` l.121) and
Reflexion's `base` strategy (`ReflexionStrategy.NONE` in noahshinn/reflexion @218cf0e): the starting harness, never
edited."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from evoarena.methods.frozen import Frozen


class Ctx:
    """Only a solver: any other use of the context (the harness, a role, the grader) fails the test."""

    def __init__(self) -> None:
        self.solves = 0

    def solve(self, task: Any) -> Any:
        self.solves += 1
        return SimpleNamespace(error=None, number=self.solves, text="answer")


def test_frozen_never_updates_and_shows_an_empty_state() -> None:
    """Seed 003 l.121: "冻结智能体用空状态写出每一个测试程序，并设定下限" (the frozen agent writes every test
    program with an empty state: the floor). It still spends one practice attempt per step (docs/methods/frozen.md
    § Deliberate differences)."""
    ctx = Ctx()
    task = SimpleNamespace(id="t", prompt="p")
    assert Frozen().practice(ctx, task) is None  # type: ignore[arg-type]
    assert ctx.solves == 1
    assert Frozen().context({}, task) == ""  # type: ignore[arg-type]
    assert Frozen.roles == ("solver",)
