"""A method cannot reach the test split: it can neither grade test tasks nor regenerate them."""

from __future__ import annotations

import gc
import types
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import Method, PracticeContext, Task, TaskView, TestSplitLocked, method
from evoarena.harness import Manifest
from evoarena.protocol.runner import run_experiment

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
        with pytest.raises(TestSplitLocked):
            ctx._grader.grade("test-000", "1")
        val = ctx.val[0]
        with pytest.raises(TestSplitLocked):
            ctx.label(val)
        with pytest.raises(TestSplitLocked):
            ctx._benchmark.build()
        objs = reachable(ctx)
        SEEN["test_tasks"] = [o for o in objs if isinstance(o, Task) and o.split == "test"]
        SEEN["train_tasks"] = [o for o in objs if isinstance(o, Task) and o.split == "train"]
        return None


def test_method_cannot_reach_the_test_split(tmp_path: Path, make_spec: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    SEEN.clear()
    run_experiment(make_spec(methods=[{"name": "test-snoop"}]), tmp_path / "run")
    assert SEEN["done"]
    assert SEEN["train_tasks"], "the walk should at least find the train tasks the grader holds"
    assert SEEN["test_tasks"] == []
