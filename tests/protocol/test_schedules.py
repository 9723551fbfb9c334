"""The two schedules as pure policies: the units each yields, decided from the results sent back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from evoarena.api import Benchmark, Curriculum, PracticeSelectTest, Schedule, Task
from evoarena.api.params import Params
from evoarena.protocol.run.schedules import CurriculumSchedule, PracticeSelectTestSchedule, schedule_for
from evoarena.protocol.run.schedules.base import CellInputs, Charge, Lane, Outcome, Phase, Tick, Unit, UnitKind
from evoarena.protocol.run.schedules.results import (
    CheckpointResult,
    FinalTestResult,
    StageTestResult,
    StepResult,
    UnitResult,
)
from evoarena.protocol.splits import PracticeSplits
from evoarena.spec import ProtocolSpec
from evoarena.store.selection import Reason

BUDGET = {"attempts": 0, "calls": 0, "tokens": 0, "exhausted_by": None}
Answer = Callable[[Unit], UnitResult | None]


def drive(lane: Lane, answer: Answer) -> tuple[list[Unit | Phase | Tick], Outcome]:
    """Run a lane as the cell loop would, answering each unit with `answer`; what it yielded and how it ended."""
    seen: list[Unit | Phase | Tick] = []
    reply: UnitResult | None = None
    while True:
        try:
            item = lane.send(reply)
        except StopIteration as end:
            return seen, end.value
        seen.append(item)
        reply = answer(item) if isinstance(item, Unit) else None


def task(tid: str, split: Any = "train", **meta: Any) -> Task:
    return Task(tid, split, tid, f"prompt {tid}", "ref", dict(meta))


def inputs(train: list[Task], val: list[Task], **protocol: Any) -> CellInputs:
    return CellInputs("c", 0, PracticeSplits(tuple(train), tuple(val)), ProtocolSpec(**protocol),
                      StageParams(max_attempts=2), test_size=5)


class StageParams(Params):
    max_attempts: int = 3


def units(items: list[Unit | Phase | Tick]) -> list[Unit]:
    return [i for i in items if isinstance(i, Unit)]


def test_each_api_schedule_has_its_registered_schedule() -> None:
    assert schedule_for(PracticeSelectTest) is PracticeSelectTestSchedule
    assert schedule_for(Curriculum) is CurriculumSchedule

    class Staged(Curriculum):
        """A benchmark's own name for the curriculum."""

    assert schedule_for(Staged) is CurriculumSchedule

    class Unknown(Schedule):
        name = "unknown"

    with pytest.raises(TypeError, match="no schedule runs"):
        schedule_for(Unknown)


def test_practice_select_test_checkpoints_then_selects_the_earliest_best() -> None:
    train, val = [task(f"t{i}") for i in range(4)], [task("v0", "val"), task("v1", "val")]
    schedule = PracticeSelectTestSchedule(inputs(train, val, select_every=2))
    versions = iter(["v-a", "v-b", "v-b", "v-c"])
    means = {"init": 0.5, "v-b": 0.75, "v-c": 0.75}

    def answer(unit: Unit) -> UnitResult:
        if unit.kind is UnitKind.PRACTICE:
            return StepResult(next(versions), BUDGET, "ok", unit.checkpoint, 0, passed=True)
        if unit.kind is UnitKind.CHECKPOINT:
            return CheckpointResult(means[unit.version], BUDGET)
        return FinalTestResult(1.0)

    seen, end = drive(schedule.lanes("init")[0], answer)
    practice = [u for u in units(seen) if u.kind is UnitKind.PRACTICE]
    assert sorted(u.tasks[0].id for u in practice) == ["t0", "t1", "t2", "t3"]  # each once, in a seeded order
    assert [u.checkpoint for u in practice] == [False, True, False, True]
    assert [u.version for u in practice] == ["init", "v-a", "v-b", "v-b"]  # each step starts where the last ended
    assert all(u.optional and u.meter is Charge.BUDGET for u in practice)
    checks = [u for u in units(seen) if u.kind is UnitKind.CHECKPOINT]
    assert [u.version for u in checks] == ["init", "v-c", "v-b"]  # the initial, the final, then those between
    assert [u.optional for u in checks] == [False, True, True]  # the first checkpoint is graded even when spent
    assert all(u.meter is Charge.SELECTION and u.tasks == tuple(val) for u in checks)
    assert units(seen)[-1] == Unit("test/v-b", UnitKind.TEST, "v-b", meter=Charge.OUTSIDE)
    assert (end.current, end.selected) == ("v-c", "v-b")
    assert end.selection is not None and end.selection.reason is Reason.TIE
    assert [(c.version, c.step, c.val) for c in end.selection.candidates] == [
        ("init", 0, 0.5), ("v-b", 2, 0.75), ("v-c", 4, 0.75)]
    assert [i for i in seen if isinstance(i, Phase)] == [Phase("select"), Phase("test")]
    assert schedule.total() == 4 + 3 * 2 + 5  # steps, the initial version and two checkpoints on val, the test


def test_practice_stops_when_a_step_is_skipped_and_the_last_version_counts() -> None:
    schedule = PracticeSelectTestSchedule(inputs([task("t0"), task("t1"), task("t2")], [task("v0", "val")]))

    def answer(unit: Unit) -> UnitResult | None:
        if unit.kind is UnitKind.PRACTICE:
            return StepResult("v-a", BUDGET, "ok", False, 0) if unit.version == "init" else None
        if unit.kind is UnitKind.CHECKPOINT:
            return CheckpointResult(1.0 if unit.version == "v-a" else 0.0, BUDGET)
        return FinalTestResult(0.0)

    seen, end = drive(schedule.lanes("init")[0], answer)
    assert len([u for u in units(seen) if u.kind is UnitKind.PRACTICE]) == 2  # the second was skipped: no third
    assert [u.version for u in units(seen) if u.kind is UnitKind.CHECKPOINT] == ["init", "v-a"]
    assert Phase("select") in seen and end.current == "v-a"
    assert (end.current, end.selected) == ("v-a", "v-a")
    assert end.selection is not None and end.selection.reason is Reason.BEST


def test_select_last_grades_no_checkpoint() -> None:
    schedule = PracticeSelectTestSchedule(inputs([task("t0")], [task("v0", "val")], select="last"))
    step, final = StepResult("v-a", BUDGET, "ok", True, 0), FinalTestResult(0.0)
    seen, end = drive(schedule.lanes("init")[0], lambda u: step if u.kind is UnitKind.PRACTICE else final)
    assert [u.kind for u in units(seen)] == [UnitKind.PRACTICE, UnitKind.TEST]
    assert (end.current, end.selected) == ("v-a", "v-a")
    assert end.selection is not None and end.selection.reason is Reason.SELECT_LAST


def curriculum() -> CurriculumSchedule:
    train = [task(f"e{e}s{s}", episode=e, stage=s, test_id=f"x{e}{s}") for e in (0, 1) for s in (1, 0)]
    return CurriculumSchedule(inputs(train, []))


def test_a_curriculum_runs_each_episode_as_a_lane_of_stages() -> None:
    schedule = curriculum()
    assert schedule.independent and schedule.total() == 8 and schedule.first_key() == "e0s0/a1"

    def answer(unit: Unit) -> UnitResult:
        if unit.kind is UnitKind.PRACTICE:  # the first stage passes at its second attempt, the second never
            return StepResult(f"{unit.key}!", BUDGET, "ok", False, 0, passed=unit.key == "e0s0/a2")
        return StageTestResult(1.0, None)

    lanes = schedule.lanes("init")
    assert len(lanes) == 2
    seen, end = drive(lanes[0], answer)
    keys = [u.key for u in units(seen)]
    assert keys == ["e0s0/a1", "e0s0/a2", "test/x00", "e0s1/a1", "e0s1/a2", "test/x01"]
    first, second, stage_test = units(seen)[:3]
    assert (first.attempt_limit, first.first_attempt, second.first_attempt) == (1, 1, 2)
    assert first.visible is not None and [v.id for v in first.visible.train] == ["e0s0"] and first.visible.val == ()
    last = units(seen)[4]
    assert last.visible is not None and [v.id for v in last.visible.train] == ["e0s0", "e0s1"]
    assert stage_test == Unit("test/x00", UnitKind.STAGE_TEST, "e0s0/a2!", test_ids=("x00",), meter=Charge.OUTSIDE)
    assert seen.count(Tick(None)) == 2  # a stage's practice counts once, however many attempts
    assert end == Outcome("e0s1/a2!", None)


def test_a_spent_budget_skips_to_the_stage_test() -> None:
    seen, end = drive(curriculum().lanes("init")[1], lambda u: None)
    assert [u.kind for u in units(seen)] == [UnitKind.PRACTICE, UnitKind.STAGE_TEST] * 2
    assert end == Outcome("init", None)


def test_a_curriculum_benchmark_must_declare_its_attempts_per_stage() -> None:
    """The curriculum reads `max_attempts` from the benchmark's validated Params, never from raw spec params."""
    with pytest.raises(TypeError, match="needs max_attempts"):
        class NoAttempts(Benchmark):  # noqa: F841
            schedule = Curriculum

    assert CurriculumSchedule(inputs([task("a", episode="e", stage=0)], [])).attempts == 2
