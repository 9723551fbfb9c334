"""The Action Fusion study (evoarena.studies.action_fusion): the plan is fixed by its seed and mixes every kind of
pair, the fused calls keep every promise against the unfused reference in the real sandbox, the checks catch a
fusion that misreports a test or runs one after a failed edit, and the command prints the study as JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.runtime import ActionFusion, Fused, ThenRun
from evoarena.runtime.action_fusion import Edit, Write
from evoarena.sandbox import SandboxResult
from evoarena.studies import action_fusion as study_module
from evoarena.studies.action_fusion import KINDS, replay, session, study


def test_the_plan_is_seeded_and_holds_every_kind_of_pair() -> None:
    files, plan = session(0)
    assert (files, plan) == session(0) and plan != session(1)[1]
    kinds = {p.kind for s in range(4) for p in session(s)[1]}
    assert kinds == set(KINDS)
    assert any(p.test_passes is False for p in plan) and any(p.test_passes for p in plan)
    assert all(p.test_passes is None for p in plan if not p.edit_applies)
    with pytest.raises(ValueError):
        session(0, pairs=0)


def test_fused_calls_keep_every_promise_in_the_sandbox() -> None:
    rows = [replay(0, 6), replay(1, 8)]
    assert [r.violations for r in rows] == [0, 0]
    one = rows[0]
    assert (one.pairs, one.tests_passed, one.tests_failed, one.round_trips_unfused, one.round_trips_fused) == (
        6, 4, 2, 12, 6)
    two = rows[1]
    assert two.edits_failed == two.tests_skipped > 0  # a failed edit is in the small run, and its test is skipped
    for r in rows:  # one round trip saved per edit that applied, none for a failed one
        assert r.saved == r.pairs - r.edits_failed
        assert r.round_trips_fused == r.pairs
        assert r.sandbox_runs == 2 * (r.tests_passed + r.tests_failed)


def _passing(code: str, **_: Any) -> SandboxResult:
    return SandboxResult("all good\n", "", 0, False, False, "rlimits", 0.0)


def test_a_fusion_that_turns_a_failing_test_into_a_pass_is_caught() -> None:
    r = replay(0, 6, runner=_passing)
    assert r.violations_verbatim == r.tests_passed + r.tests_failed == 6  # no output matches the real run's
    assert r.violations_plan == 2  # the two failing tests now "pass"


class _RunsAfterAFailedEdit(ActionFusion):
    def call(self, change: Write | Edit, then_run: ThenRun) -> Fused:
        done = super().call(change, then_run)
        if done.edit.ok:
            return done
        self.tests_run += 1
        return Fused(done.edit, _passing(then_run.code))


def test_a_fusion_that_runs_a_test_after_a_failed_edit_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(study_module, "ActionFusion", _RunsAfterAFailedEdit)
    r = replay(1, 8)
    assert r.edits_failed > 0 and r.violations_skip == r.edits_failed


def test_the_command_line_prints_the_study_as_json() -> None:
    result = CliRunner().invoke(app, ["study", "action-fusion", "--seeds", "1", "--pairs", "4", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["study"], data["seeds"], data["pairs"]) == ("action-fusion", 1, 4)
    (row,) = data["rows"]
    assert row["seed"] == 0 and row["violations"] == 0
    assert row["saved"] == row["round_trips_unfused"] - row["round_trips_fused"] == replay(0, 4).saved
    assert "Promise violations: 0" in data["reading"]


def test_ten_sessions_as_in_the_docs() -> None:
    rows = study()
    assert (sum(r.round_trips_unfused for r in rows), sum(r.round_trips_fused for r in rows)) == (251, 137)
    assert (sum(r.edits_failed for r in rows), sum(r.tests_failed for r in rows), sum(r.tests_passed for r in rows)
            ) == (23, 68, 46)
    assert sum(r.violations for r in rows) == 0
