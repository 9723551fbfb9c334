"""Unit results: one record per kind, stored as the JSON objects earlier runs wrote, so a resumed run reads them."""

from __future__ import annotations

import json
from pathlib import Path

from evoarena.protocol.run.schedules.results import (
    CheckpointResult,
    FinalTestResult,
    InitResult,
    StageTestResult,
    StepResult,
    commit,
    decode,
    encode,
    read,
)
from evoarena.store import RunStore

BUDGET = {"attempts": 2, "calls": 3, "tokens": 40, "exhausted_by": None}


def test_records_encode_to_the_objects_stored_before() -> None:
    step = StepResult("v1", BUDGET, "ok", True, 0, passed=False)
    assert json.dumps(encode(step), sort_keys=True) == json.dumps(
        {"version": "v1", "budget": BUDGET, "status": "ok", "checkpoint": True, "rejections": 0, "passed": False},
        sort_keys=True)  # no budget_scope while it is None
    assert encode(StepResult("v1", BUDGET, "budget", False, 1, True, "episode"))["budget_scope"] == "episode"
    assert encode(InitResult("v0", BUDGET)) == {"version": "v0", "budget": BUDGET}
    assert encode(CheckpointResult(0.5, BUDGET)) == {"mean": 0.5, "budget": BUDGET}
    assert encode(FinalTestResult(0.25)) == {"mean": 0.25}
    assert encode(StageTestResult(None, None)) == {"score": None, "diagnostics": None}  # None kept where it is data


def test_decode_fills_what_older_results_lack() -> None:
    old = {"version": "v1", "budget": BUDGET, "status": "ok", "checkpoint": False, "rejections": 0}
    assert decode(StepResult, old) == StepResult("v1", BUDGET, "ok", False, 0, passed=False, budget_scope=None)


def test_a_committed_result_reads_back_equal(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.upsert_cell("c", condition="x", method="m", model="scripted", seed=0, status="running")
    result = StepResult("v1", BUDGET, "ok", True, 2, passed=True, budget_scope="episode")
    assert read(store, "c", "practice/e0/0000/t", StepResult) is None
    commit(store, "c", "practice/e0/0000/t", result, [])
    assert read(store, "c", "practice/e0/0000/t", StepResult) == result
