"""A method cannot reach the test split: it can neither grade test tasks nor regenerate them, and nothing reachable
from its context (attributes, closures, bound methods, evoarena's module globals) is a benchmark, a store, a grader,
a role model with its ledger, or any task. In-process, a frame walk still reaches the cell: documented, and closed
only by process isolation (docs/security.md)."""

from __future__ import annotations

import gc
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import Benchmark, Method, PracticeContext, Task, TaskView, TestSplitLocked, method
from evoarena.harness import Manifest
from evoarena.models import ResponseCache, RoleModel
from evoarena.protocol.run.runner import run_experiment
from evoarena.protocol.run.step_service import Grader, StepService
from evoarena.store import RunStore

CELL_SIDE = (Benchmark, RunStore, RoleModel, ResponseCache, Grader, StepService)

SEEN: dict[str, Any] = {}


def reachable(root: object, limit: int = 500_000) -> list[object]:
    """Everything reachable from `root` through references (bound methods, closures, evoarena's module globals too;
    other libraries' modules are not walked: torch alone holds more objects than the limit)."""
    seen: set[int] = set()
    todo, out = [root], []
    while todo:
        assert len(out) < limit, "object graph walk did not finish"
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, type):
            continue
        if isinstance(obj, types.ModuleType) and not obj.__name__.startswith("evoarena"):
            continue
        seen.add(id(obj))
        out.append(obj)
        if isinstance(obj, (str, bytes, int, float)):
            continue
        todo.extend(gc.get_referents(obj))
    return out


@method("test-snoop")
class Snoop(Method):
    """Tries everything a curious method might try."""

    name = "snoop"

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if "done" in SEEN:
            return None
        SEEN["done"] = True
        fake = TaskView("test-000", "test", "test-000", "?")
        with pytest.raises(TestSplitLocked):
            ctx.solve(fake)
        val = ctx.val[0]
        with pytest.raises(TestSplitLocked):
            ctx.label(val)
        for name in ("_benchmark", "_grader", "_models", "_method", "_meter", "_on_event"):
            assert not hasattr(ctx, name), name
        assert not hasattr(ctx.model("solver"), "store") and not hasattr(ctx.model("solver"), "cache")
        objs = reachable(ctx)
        SEEN["tasks"] = [o for o in objs if isinstance(o, Task)]
        SEEN["cell_side"] = [type(o).__name__ for o in objs if isinstance(o, CELL_SIDE)]
        SEEN["views"] = [o for o in objs if isinstance(o, TaskView)]
        frames, frame = [], sys._getframe()
        while frame is not None:
            frames.append(frame)
            frame = frame.f_back
        SEEN["frame_route"] = any(isinstance(v, RunStore) for f in frames for v in f.f_locals.values()) or any(
            isinstance(getattr(v, "store", None), RunStore) for f in frames for v in f.f_locals.values())
        return None


def test_method_cannot_reach_the_test_split(tmp_path: Path, make_spec: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    SEEN.clear()
    run_experiment(make_spec(methods=[{"name": "test-snoop"}]), tmp_path / "run")
    assert SEEN["done"]
    assert SEEN["views"], "the walk should at least find the train/val views the context holds"
    assert SEEN["tasks"] == []  # no task with its reference, of any split
    assert SEEN["cell_side"] == []
    assert SEEN["frame_route"]  # the route that remains in-process, for trusted code: the caller's frames
