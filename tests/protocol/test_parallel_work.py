"""A step's parallel work through the context: `ctx.rollouts` and `ctx.ask_many` return what the one-at-a-time calls
would, in order, run concurrently (the run-wide cap on calls in flight holds), and a budget refuses a batch exactly
where the sequential rollouts would have stopped. Curriculum episodes run side by side, each in its own workspace."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import Method, PracticeContext, Rollout, TaskView, method, policy
from evoarena.harness import Manifest
from evoarena.models import GenParams, Message, ResponseCache
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import arith_student
from evoarena.spec import parse_spec
from evoarena.store import RunStore

IN_FLIGHT = {"now": 0, "peak": 0}
_LOCK = threading.Lock()


@policy("test-slow-arith")
def slow_arith(messages: Sequence[Message], params: GenParams) -> str:
    """arith-student, 20 ms a call, counting calls in flight; an ask that says FAIL gets no answer."""
    with _LOCK:
        IN_FLIGHT["now"] += 1
        IN_FLIGHT["peak"] = max(IN_FLIGHT["peak"], IN_FLIGHT["now"])
    try:
        time.sleep(0.02)
        text = messages[-1].content
        if text.startswith("ECHO "):
            return "x " * 50 if "LONG" in text else text.removeprefix("ECHO ").upper()
        return arith_student(messages, params)
    finally:
        with _LOCK:
            IN_FLIGHT["now"] -= 1


@method("test-batch-user")
class BatchUser(Method):
    """Each step: rollouts of every train task in one batch and one by one, three asks at once and one by one; writes
    what it saw into its harness, so the test can compare."""

    roles = ("solver", "helper")

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        group = [Rollout(task, sample_index=i) for i in range(3)]
        batch = ctx.rollouts([*ctx.train, *group])
        single = [ctx.rollout(t) for t in ctx.train] + [ctx.rollout(task, sample_index=i) for i in range(3)]
        prompts = ["ECHO a", "ECHO LONG b", "ECHO c"]
        many = ctx.ask_many("helper", prompts, max_tokens=8, reject_cut_off="echo", note=False)
        one = [ctx.ask("helper", p, max_tokens=8, reject_cut_off="echo", note=False) for p in prompts]
        seen = {"batch": [(a.task_id, a.answer) for a in batch], "single": [(a.task_id, a.answer) for a in single],
                "many": [None if r is None else r.text for r in many],
                "one": [None if r is None else r.text for r in one]}
        ctx.harness.write(f"memory/seen-{ctx.step}.json", json.dumps(seen))
        return None


def _spec(method: str = "test-batch-user", **extra: Any) -> Any:
    return parse_spec({
        "name": "batch", "benchmark": {"name": "arith", "params": {"seed": 1, "n_train": 4, "n_val": 0, "n_test": 6}},
        "methods": [{"name": method}],
        "models": {"s": {"backend": "scripted", "model": "test-slow-arith", "concurrency": 32}},
        "roles": {"solver": "s", "helper": "s"}, "protocol": {"select": "last"}, **extra,
    })


def test_batched_work_equals_one_at_a_time_and_runs_within_the_cap(tmp_path: Path) -> None:
    IN_FLIGHT.update(now=0, peak=0)
    run_experiment(_spec(), tmp_path / "run", concurrency=3)
    store = RunStore(tmp_path / "run")
    trees = [json.loads(p.read_text()) for p in sorted((tmp_path / "run" / "cells").glob("*/harness/memory/*.json"))]
    assert trees, "the method ran no step"
    for seen in trees:
        assert seen["batch"] == seen["single"] and len(seen["batch"]) == 7
        assert seen["many"] == seen["one"] == ["A", None, "C"]  # the cut-off one rejected in both
    assert 1 < IN_FLIGHT["peak"] <= 3
    rejected = store.query("SELECT COUNT(*) AS n FROM events WHERE kind = 'rejected_output'")[0]["n"]
    assert rejected == 2 * len(trees)


def test_a_budget_refuses_a_batch_where_the_rollouts_would_have_stopped(tmp_path: Path) -> None:
    """max_attempts 10 on a cell whose first step asks for 7 + 7 rollouts: the batch runs whole (7), the next 3 run
    one by one, the fourth is refused; the step ends as budget-exhausted with those 10 rows kept."""
    run_experiment(_spec(budget={"max_attempts": 10}), tmp_path / "run", concurrency=4)
    store = RunStore(tmp_path / "run")
    rows = store.query("SELECT unit_key, phase FROM attempts WHERE phase = 'rollout'")
    assert len(rows) == 10 and len({r["unit_key"] for r in rows}) == 1
    events = store.query("SELECT payload FROM events WHERE kind = 'budget_exhausted'")
    assert events and "max_attempts=10" in events[0]["payload"]


def test_batched_rollouts_are_refused_outside_train_and_val(tmp_path: Path) -> None:
    @method("test-batch-peeker")
    class Peeker(Method):
        def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
            fake = TaskView("arith-test-000", "test", "x", "What is 1 + 1?")
            try:
                ctx.rollouts([task, fake])
            except Exception as err:  # noqa: BLE001 - what the method is told
                ctx.harness.write("refused.txt", type(err).__name__)
            return None

    run_experiment(_spec("test-batch-peeker"), tmp_path / "run", concurrency=4)
    refused = list((tmp_path / "run" / "cells").glob("*/harness/refused.txt"))
    assert refused and refused[0].read_text() == "TestSplitLocked"
    assert not RunStore(tmp_path / "run").query("SELECT id FROM attempts WHERE phase = 'rollout'")


@pytest.mark.timeout(300)
def test_curriculum_episodes_run_side_by_side(tmp_path: Path) -> None:
    """CLR's chains of one cell at once (a workspace each); the run's results are those of the sequential run."""
    spec = parse_spec({"name": "eps", "benchmark": {"name": "clr", "params": {"chains": 3, "layers": 2}},
                       "methods": [{"name": "history"}], "roles": {"solver": "s"},
                       "models": {"s": {"backend": "scripted", "model": "clr-student"}}})
    parallel = run_experiment(spec, tmp_path / "par", concurrency=4, cache=ResponseCache(tmp_path / "c1.sqlite"))
    cell = next((tmp_path / "par" / "cells").iterdir())
    assert sorted(p.name for p in (cell / "episodes").iterdir()) == ["000", "001", "002"]
    sequential = run_experiment(spec, tmp_path / "seq", cache=ResponseCache(tmp_path / "c2.sqlite"))
    drop = {"started_at", "finished_at", "latency_s"}

    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if k not in drop}
        return [clean(x) for x in v] if isinstance(v, list) else v

    assert clean(parallel) == clean(sequential)
    units = RunStore(tmp_path / "par").query("SELECT result FROM units WHERE key LIKE '%/practice/a%'")
    assert units and all(json.loads(u["result"])["budget_scope"] == "episode" for u in units)
