"""Change manifests scored on the next attempt (`report.change_report`), on a store this test writes by hand.

One cell, units init, s1 … s4; versions v0 (init) → v1 (s1) → v2 (s2) → v3 (s3), and a candidate c (s3, parent v1)
on a side branch. Outcomes (P = pass, F = fail, E = provider error):

    s1 under v0: A F, B P, C F, D F              → v1 expects fixes A, C, U (U is never attempted)
    s2 under v1: A P, B F, C F, D F then D P     → v2 expects fix D (D re-run with an edited prompt: measured in step)
    s3: E F under c (not an ancestor of v3), then under v2: D P, E P, F P, G F
                                                 → v3 expects fix G, regression E
    s4 under v3: E P + E F (two rollouts), F F, G E
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evoarena.harness import Manifest, save_version
from evoarena.harness.change_scoring import ChangeVerdict
from evoarena.report.change_report import CellChanges, change_report, score_cell, summarise, task_groups
from evoarena.store import AttemptRow, RunStore
from evoarena.store.queries import PracticeAttempt, practice_attempts, unit_keys
from evoarena.store.versions import cell_versions

CELL = "m__scripted__s0"


def _call(store: RunStore, prompt: str) -> int:
    return store.record_call(cell=CELL, phase="practice", role="solver", model="s", backend="scripted", model_id="s",
                             params="{}", prompt_hash=prompt, cache_key=prompt, input_tokens=1, output_tokens=1,
                             latency_s=0.0, cost_usd=0.0, cached=0, retries=0)


def _row(store: RunStore, task: str, version: str, passed: bool | None, prompt: str | None = None) -> AttemptRow:
    """An attempt under `version`; its call's prompt is the version's (or `prompt`); None: a provider error."""
    if passed is None:
        return AttemptRow(phase="practice", task_id=task, version_id=version, error="provider down")
    call = _call(store, prompt or f"{version}:{task}")
    return AttemptRow(phase="rollout", task_id=task, version_id=version, score=float(passed), passed=passed,
                      call_id=call)


def _version(store: RunStore, name: str, parents: list[str], step: str, method: str = "m",
             cell: str = CELL, **manifest: list[str]) -> str:
    return save_version(store, cell, {"h.md": name}, parents=parents, method=method, step=step,
                        manifest=Manifest(intent=name, **manifest))


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    s = RunStore(tmp_path / "run")
    s.upsert_cell(CELL, condition="m", method="m", model="scripted", seed=0, status="done")
    v0 = _version(s, "v0", [], "init")
    s.finish_unit(CELL, "init", {}, [])
    v1 = _version(s, "v1", [v0], "s1", expected_fixes=["A", "C", "U"])
    s.finish_unit(CELL, "s1", {}, [_row(s, "A", v0, False), _row(s, "B", v0, True), _row(s, "C", v0, False),
                                   _row(s, "D", v0, False)])
    v2 = _version(s, "v2", [v1], "s2", expected_fixes=["D"])
    s.finish_unit(CELL, "s2", {}, [_row(s, "A", v1, True), _row(s, "B", v1, False), _row(s, "C", v1, False),
                                   _row(s, "D", v1, False), _row(s, "D", v1, True, prompt="edited")])
    c = _version(s, "c", [v1], "s3")
    v3 = _version(s, "v3", [v2], "s3", expected_fixes=["G"], expected_regressions=["E"])
    s.finish_unit(CELL, "s3", {}, [_row(s, "E", c, False), _row(s, "D", v2, True), _row(s, "E", v2, True),
                                   _row(s, "F", v2, True), _row(s, "G", v2, False)])
    s.finish_unit(CELL, "s4", {}, [_row(s, "E", v3, True), _row(s, "E", v3, False), _row(s, "F", v3, False),
                                   _row(s, "G", v3, None)])
    return s


def _scored(store: RunStore) -> CellChanges:
    return score_cell(cell_versions(store, CELL), practice_attempts(store, CELL), unit_keys(store, CELL))


def test_each_change_is_judged_on_the_next_attempt_of_its_tasks(store: RunStore) -> None:
    intents = {v.id: v.manifest["intent"] for v in cell_versions(store, CELL)}
    by_intent = {intents[r.change.version]: r for r in _scored(store).changes}
    assert list(by_intent) == ["v1", "v2", "c", "v3"]  # every version with a parent, in the order made
    v1, v2, c, v3 = by_intent.values()
    # v1: A failed in s1 and passed in s2 (fixed), C failed again, U was never attempted again; B regressed unnamed
    assert v1.measured == {"A": ("fail", "pass"), "B": ("pass", "fail"), "C": ("fail", "fail"), "D": ("fail", "fail")}
    assert v1.unmeasured == ("U",) and v1.flipped == ("A",) and v1.regressed == ("B",)
    assert v1.verdict is ChangeVerdict.PARTIALLY_EFFECTIVE and v1.pool == "predicted"
    # v2: D's before is its first s2 attempt (the step's harness before its edit), its after the s3 attempt
    assert v2.measured == {"D": ("fail", "pass")} and v2.verdict is ChangeVerdict.EFFECTIVE
    assert v2.in_step == ("D",) and v2.pool == "in_step"  # the step itself saw D pass after the edit
    # c names nothing and nothing ran under it or a descendant later: no window, no verdict
    assert c.measured == {} and c.verdict is None and c.change.named == ()
    # v3: E's before is the s3 attempt under v2 (the failed one under the side branch c does not count); two s4
    # rollouts, one failed: E fails (AHE: pass iff all pass); G's only later attempt was a provider error
    assert v3.measured == {"E": ("pass", "fail"), "F": ("pass", "fail")}  # D was not attempted after s3
    assert v3.unmeasured == ("G",) and v3.verdict is ChangeVerdict.HARMFUL and v3.regressed == ("E", "F")


def test_the_condition_figures_pool_unique_tasks_per_window(store: RunStore) -> None:
    got = summarise([_scored(store)])
    assert {k: v for k, v in got.items() if k not in ("predicted", "in_step")} == {
        "changes": 4, "predicting": 3, "predictions": 6, "unmeasured": 2, "measured_in_step": 1,
        "windows": 7, "flipped": 2, "regressed": 3, "unattributed_regressions": 2}  # B and F: named by no change
    predicted, in_step = got["predicted"], got["in_step"]
    assert predicted["changes"] == 3 and predicted["scored"] == 2
    assert predicted["verdicts"] == {"HARMFUL": 1, "PARTIALLY_EFFECTIVE": 1}
    # fix: v1's windows named A and C, A flipped and was the only flip among them
    assert predicted["fix"] == {"precision": 0.5, "recall": 1.0, "hits": 1, "predicted": 2, "actual": 1}
    # regression: E named and regressed; B, E and F regressed in windows of these changes
    assert predicted["regression"] == {"precision": 1.0, "recall": pytest.approx(1 / 3), "hits": 1,
                                       "predicted": 1, "actual": 3}
    assert in_step["changes"] == 1 and in_step["verdicts"] == {"EFFECTIVE": 1}
    assert in_step["fix"] == {"precision": 1.0, "recall": 1.0, "hits": 1, "predicted": 1, "actual": 1}


def test_rollouts_of_one_harness_are_one_outcome_and_errors_join_them(store: RunStore) -> None:
    groups = task_groups(practice_attempts(store, CELL), {k: i for i, k in enumerate(unit_keys(store, CELL))})
    assert [(g.unit, g.outcome) for g in groups["E"]] == [(3, "fail"), (3, "pass"), (4, "fail")]
    assert [g.outcome for g in groups["D"]] == ["fail", "fail", "pass", "pass"]  # s2's edited re-run apart
    assert [g.outcome for g in groups["G"]] == ["fail", "exception"]
    # an attempt without a known call joins the task's last group of its unit and version
    rows = [PracticeAttempt(1, "s1", "T", "v", 1.0, True, None, "p"), PracticeAttempt(2, "s1", "T", "v", None, None,
                                                                                    "down", None)]
    (only,) = task_groups(rows, {"s1": 0})["T"]
    assert only.outcome == "fail" and only.score == 0.5


def test_the_report_names_each_condition_and_skips_methods_that_score_their_own(store: RunStore) -> None:
    report = change_report(store, order=["m"])
    assert report is not None and [c["condition"] for c in report["conditions"]] == ["m"]
    assert report["conditions"][0]["method"] == "m" and report["conditions"][0]["cells"] == 1
    assert change_report(store, skip_methods=["m"]) is None


def test_no_section_without_a_manifest_that_names_a_task(tmp_path: Path) -> None:
    s = RunStore(tmp_path / "run")
    s.upsert_cell(CELL, condition="m", method="m", model="scripted", seed=0, status="done")
    v0 = _version(s, "v0", [], "init")
    s.finish_unit(CELL, "init", {}, [])
    _version(s, "v1", [v0], "s1")
    s.finish_unit(CELL, "s1", {}, [_row(s, "A", v0, False)])
    assert change_report(s) is None
