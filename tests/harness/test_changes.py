"""AHE change manifests: validation, k-rollout outcomes, the released verdict rules, P/R, rollback and the bridge."""

from __future__ import annotations

import json

import pytest

from evoarena.harness.change_scoring import (
    ChangeVerdict,
    PredictionPR,
    harmful_files,
    mean_pr,
    pooled_pr,
    score_round,
    task_outcomes,
    task_pass,
    verdict,
)
from evoarena.harness.changes import (
    ChangeEntry,
    ChangeManifest,
    ManifestError,
    changed_files,
    from_version_manifest,
    rollback_files,
)
from evoarena.harness.paths import HarnessPathError
from evoarena.harness.versions import Manifest


def _manifest(*changes: dict[str, object]) -> ChangeManifest:
    return ChangeManifest.from_dict({"iteration": 3, "changes": list(changes)})


def _chg(cid: str, predicted: list[str] | None = None, risk: list[str] | None = None,
         files: list[str] | None = None) -> dict[str, object]:
    return {"id": cid, "type": "improvement", "predicted_fixes": predicted or [], "risk_tasks": risk or [],
            "files": files or []}


# --- manifests ---------------------------------------------------------------------------------------------------

def test_manifest_round_trips_and_keeps_every_field() -> None:
    text = json.dumps({"iteration": 2, "changes": [{
        "id": "chg-1", "type": "new", "description": "add a retry tool", "files": ["tools/retry.py"],
        "failure_pattern": "flaky network", "predicted_fixes": ["t1", "t2"], "risk_tasks": ["t3"],
        "constraint_level": "tool_impl", "why_this_component": "a prompt rule did not stick", "extra": 1}]})
    m = ChangeManifest.from_json(text)
    c = m.changes[0]
    assert (m.iteration, c.id, c.type, c.files) == (2, "chg-1", "new", ("tools/retry.py",))
    assert (c.predicted_fixes, c.risk_tasks, c.constraint_level) == (("t1", "t2"), ("t3",), "tool_impl")
    assert ChangeManifest.from_json(m.to_text()) == m


def test_repeated_task_ids_and_files_are_kept_once_in_order() -> None:
    c = ChangeEntry(id="c", type="rollback", files=("b.md", "a.md", "b.md"), predicted_fixes=("y", "x", "y"))
    assert c.files == ("b.md", "a.md")
    assert c.predicted_fixes == ("y", "x")


@pytest.mark.parametrize(("text", "message"), [
    ('{"changes": [{"type": "new"}]}', "changes[0]: missing id"),
    ('{"changes": [{"id": "", "type": "new"}]}', "changes[0]: id must be a non-empty string"),
    ('{"changes": [{"id": "c1", "type": "tweak"}]}', "change 'c1': unknown type 'tweak'"),
    ('{"changes": [{"id": "c1"}]}', "change 'c1': missing type"),
    ('{"changes": [{"id": "c1", "type": "new"}, {"id": "c1", "type": "rollback"}]}', "duplicate change id 'c1'"),
    ('{"changes": [{"id": "c1", "type": "new", "predicted_fixes": "t1"}]}',
     "change 'c1': predicted_fixes must be a list of task ids, got str"),
    ('{"changes": [{"id": "c1", "type": "new", "risk_tasks": {"t": 1}}]}',
     "change 'c1': risk_tasks must be a list of task ids, got dict"),
    ('{"changes": [{"id": "c1", "type": "new", "risk_tasks": [3]}]}', "risk_tasks must hold non-empty strings"),
    ('{"changes": [{"id": "c1", "type": "new", "files": ["/etc/passwd"]}]}', "absolute paths are refused"),
    ('{"changes": [{"id": "c1", "type": "new", "files": ["tools/../../x"]}]}', "'.' and '..' are refused"),
    ('{"changes": [{"id": "c1", "type": "new", "files": "a.md"}]}', "files must be a list of paths"),
    ('{"changes": [{"id": "c1", "type": "new", "description": 5}]}', "description must be a string"),
    ('{"changes": [], "iteration": "two"}', "iteration must be an integer"),
    ('{"changes": {}}', "'changes' must be a list"),
    ("{}", "needs a 'changes' list"),
    ("[]", "must be a JSON object"),
    ("{not json", "not valid JSON"),
])
def test_malformed_manifests_are_refused_with_a_one_line_message(text: str, message: str) -> None:
    with pytest.raises(ManifestError) as info:
        ChangeManifest.from_json(text)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


# --- k rollouts ---------------------------------------------------------------------------------------------------

def test_task_outcome_is_pass_only_when_every_recorded_rollout_passes() -> None:
    rollouts: dict[str, list[bool | float | None]] = {
        "all": [True, True], "one": [True, False], "reward": [1.0, 0.99], "exc": [None, None],
        "pass_exc": [True, None], "short": [True], "none": [], "nan": [float("nan"), 1.0]}
    got = task_outcomes(rollouts, k=2)
    assert got == {"all": "pass", "one": "fail", "reward": "fail", "exc": "exception", "pass_exc": "fail",
                   "short": "pass", "nan": "fail"}
    strict = task_outcomes(rollouts, k=2, require_k=True)
    assert (strict["short"], strict["none"], strict["all"]) == ("fail", "fail", "pass")
    assert task_outcomes(rollouts, k=2, exception_as_fail=True)["exc"] == "fail"
    assert task_pass({"a": [1.0, 1.0], "b": [1.0, None]}, k=2) == {"a": True, "b": False}


def test_task_outcomes_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="k must be"):
        task_outcomes({"a": [True]}, k=0)
    with pytest.raises(TypeError, match="rollouts must be a sequence"):
        task_outcomes({"a": "pp"}, k=2)  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="a rollout is"):
        task_outcomes({"a": ["pass"]}, k=1)  # type: ignore[list-item]


# --- verdicts -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("n_fixed", "n_predicted", "n_risk", "expected"), [
    (0, 2, 1, ChangeVerdict.HARMFUL),
    (0, 0, 1, ChangeVerdict.HARMFUL),
    (1, 2, 1, ChangeVerdict.MIXED),
    (2, 2, 1, ChangeVerdict.MIXED),
    (2, 2, 0, ChangeVerdict.EFFECTIVE),
    (1, 2, 0, ChangeVerdict.PARTIALLY_EFFECTIVE),
    (0, 2, 0, ChangeVerdict.INEFFECTIVE),
    (0, 0, 0, ChangeVerdict.INEFFECTIVE),
])
def test_verdict_rule_chain(n_fixed: int, n_predicted: int, n_risk: int, expected: ChangeVerdict) -> None:
    assert verdict(n_fixed, n_predicted, n_risk) is expected


def test_every_verdict_from_a_round() -> None:
    before = {"a": "fail", "b": "fail", "c": "fail", "d": "fail", "r1": "pass", "r2": "pass", "r3": "pass"}
    after = {"a": "pass", "b": "pass", "c": "pass", "d": "fail", "r1": "fail", "r2": "fail", "r3": "pass"}
    m = _manifest(_chg("harm", ["d"], ["r1"]), _chg("mixed", ["a"], ["r2"]), _chg("eff", ["b", "c"], ["r3"]),
                  _chg("part", ["c", "d"]), _chg("ineff", ["d"]), _chg("silent"))
    s = score_round(m, before, after)
    assert s.verdicts() == {"harm": ChangeVerdict.HARMFUL, "mixed": ChangeVerdict.MIXED, "eff": ChangeVerdict.EFFECTIVE,
                            "part": ChangeVerdict.PARTIALLY_EFFECTIVE, "ineff": ChangeVerdict.INEFFECTIVE,
                            "silent": ChangeVerdict.INEFFECTIVE}
    part = s.changes[3]
    assert (part.fixed, part.still_failed, part.hit_rate, part.hit_rate_text) == (("c",), ("d",), 0.5, "1/2")
    assert s.changes[5].hit_rate is None and s.changes[5].hit_rate_text == "0/0"
    assert s.summary().startswith("harm: HARMFUL, mixed: MIXED, eff: EFFECTIVE")


def test_an_undeclared_regression_never_makes_a_change_harmful() -> None:
    s = score_round(_manifest(_chg("c", ["a"], ["r"])), {"a": "fail", "x": "pass", "r": "pass"},
                    {"a": "fail", "x": "fail", "r": "pass"})
    assert s.regressed == ("x",)
    assert s.changes[0].verdict is ChangeVerdict.INEFFECTIVE
    assert s.unattributed_regressions == ("x",)


# --- missing tasks, unattributed regressions ------------------------------------------------------------------------

def test_tasks_missing_in_one_round_are_neither_flipped_nor_regressed() -> None:
    before: dict[str, bool | str] = {"lost": True, "back": "exception", "gone_fail": False}
    after: dict[str, bool | str] = {"new": True, "back": "pass", "ef": "fail"}
    s = score_round(_manifest(_chg("c", ["new", "back"], ["lost"])), before, after)
    assert s.flipped == () and s.regressed == ()
    t = s.transitions
    assert (t["infra_lost"], t["infra_recovered"]) == (("lost",), ("back", "new"))
    assert (t["exception_to_fail"], t["fail_to_exception"]) == (("ef",), ("gone_fail",))
    assert s.changes[0].verdict is ChangeVerdict.INEFFECTIVE


def test_unattributed_follows_the_code_and_unpredicted_the_digest() -> None:
    # "p" was predicted to be fixed but regressed: attributed in the code (it is in a change's lists), yet no change
    # declared it a risk; "q" is in nobody's lists.
    s = score_round(_manifest(_chg("c", ["p"], ["z"])), {"p": "pass", "q": "pass", "z": "pass"},
                    {"p": "fail", "q": "fail", "z": "pass"})
    assert s.regressed == ("p", "q")
    assert s.unattributed_regressions == ("q",)
    assert s.unpredicted_regressions == ("p", "q")


def test_outcomes_must_be_known() -> None:
    with pytest.raises(ValueError, match="outcome must be"):
        score_round(_manifest(), {"a": "passed"}, {})


# --- precision / recall -------------------------------------------------------------------------------------------

def test_precision_recall_worked_example() -> None:
    # 8 tasks. before: a b c d fail, e f g h pass.  after: a b d pass, c fail; f g fail, e h pass.
    # flipped = {a, b, d}; regressed = {f, g}.
    # c1 predicts {a, b}, risks {e}; c2 predicts {b, c}, risks {f}.
    # fix:   P = ∪pred {a,b,c}, hits {a,b}  -> precision 2/3, recall 2/|{a,b,d}| = 2/3;
    #        digest's summed precision = (|{a,b}| + |{b}|) / (2 + 2) = 3/4; random: 3/8, 3/8.
    # regr.: ∪risk {e,f}, hits {f}          -> precision 1/2, recall 1/|{f,g}| = 1/2.
    # c1: fixed 2/2, no risk realised -> EFFECTIVE; c2: fixed {b}, risk {f} realised -> MIXED. g is unattributed.
    before = dict.fromkeys("abcd", False) | dict.fromkeys("efgh", True)
    after = dict.fromkeys("abdeh", True) | dict.fromkeys("cfg", False)
    s = score_round(_manifest(_chg("c1", ["a", "b"], ["e"]), _chg("c2", ["b", "c"], ["f"])), before, after)
    assert (s.flipped, s.regressed) == (("a", "b", "d"), ("f", "g"))
    assert s.fix.precision == pytest.approx(2 / 3) and s.fix.recall == pytest.approx(2 / 3)
    assert s.fix.summed_precision == pytest.approx(3 / 4)
    assert (s.fix.random_precision, s.fix.random_recall) == (3 / 8, 3 / 8)
    assert (s.regression.precision, s.regression.recall) == (1 / 2, 1 / 2)
    assert s.verdicts() == {"c1": ChangeVerdict.EFFECTIVE, "c2": ChangeVerdict.MIXED}
    assert s.unattributed_regressions == ("g",)
    d = json.loads(json.dumps(s.to_dict()))
    assert d["net"] == 1 and d["change_evaluations"][1]["risk_realized"] == ["f"]
    assert d["fix_prediction"]["precision"] == pytest.approx(2 / 3) and d["evaluating_iteration"] == 3


def test_precision_recall_are_none_when_undefined() -> None:
    s = score_round(_manifest(_chg("c")), {"a": True}, {"a": True})
    assert (s.fix.precision, s.fix.recall, s.regression.summed_precision) == (None, None, None)


def test_pooled_and_mean_over_rounds() -> None:
    r1 = PredictionPR(("a", "b"), ("a", "c"), ("a",), 10, 2, 1)  # P 1/2, R 1/2
    r2 = PredictionPR(("x",), (), (), 10, 1, 0)  # P 0, R undefined
    assert pooled_pr([r1, r2]) == (1 / 3, 1 / 2)
    assert mean_pr([r1, r2]) == (0.25, 0.5)
    assert mean_pr([]) == (None, None)


# --- rollback -----------------------------------------------------------------------------------------------------

PREVIOUS = {"prompt.md": "p1", "tools/t.py": "t1", "memory.md": "m1", "gone.md": "g"}
CURRENT = {"prompt.md": "p2", "tools/t.py": "t2", "tools/new.py": "n", "memory.md": "m2",
           "skills/s/SKILL.md": "s", "skills/s/run.py": "r"}


def test_rollback_restores_and_removes_exactly_the_named_files() -> None:
    out = rollback_files(CURRENT, PREVIOUS, ["tools/t.py", "tools/new.py", "gone.md"])
    assert out == {"prompt.md": "p2", "tools/t.py": "t1", "memory.md": "m2", "gone.md": "g",
                   "skills/s/SKILL.md": "s", "skills/s/run.py": "r"}
    assert CURRENT["tools/t.py"] == "t2"  # input untouched
    assert rollback_files(CURRENT, PREVIOUS, ["skills/s"]) == {k: v for k, v in CURRENT.items()
                                                              if not k.startswith("skills/")}
    assert rollback_files(CURRENT, PREVIOUS, ["nowhere.md"]) == CURRENT
    with pytest.raises(HarnessPathError):
        rollback_files(CURRENT, PREVIOUS, ["../x"])


def test_harmful_changes_are_rolled_back_file_by_file() -> None:
    m = _manifest(_chg("bad", ["a"], ["r"], ["tools/t.py", "tools/new.py"]), _chg("good", ["a"], [], ["prompt.md"]),
                  _chg("idle", ["z"], [], ["memory.md"]))
    s = score_round(m, {"a": "fail", "r": "pass", "z": "fail"}, {"a": "fail", "r": "fail", "z": "fail"})
    assert s.verdicts() == {"bad": ChangeVerdict.HARMFUL, "good": ChangeVerdict.INEFFECTIVE,
                            "idle": ChangeVerdict.INEFFECTIVE}
    assert harmful_files(s) == ("tools/new.py", "tools/t.py")
    assert harmful_files(s, (ChangeVerdict.HARMFUL, ChangeVerdict.INEFFECTIVE)) == (
        "memory.md", "prompt.md", "tools/new.py", "tools/t.py")
    out = rollback_files(CURRENT, PREVIOUS, harmful_files(s))
    assert changed_files(CURRENT, out) == ("tools/new.py", "tools/t.py")
    assert out["tools/t.py"] == "t1" and "tools/new.py" not in out


# --- bridge from evoarena's Manifest ------------------------------------------------------------------------------

def test_version_manifest_becomes_one_change_scored_the_same_way() -> None:
    legacy = Manifest(intent="tighten the prompt", evidence="t7 loops", expected_fixes=["t7", "t8"],
                      expected_regressions=["t1"])
    files = changed_files(PREVIOUS, CURRENT)
    assert files == ("gone.md", "memory.md", "prompt.md", "skills/s/SKILL.md", "skills/s/run.py",
                     "tools/new.py", "tools/t.py")
    m = from_version_manifest(legacy, files=files, iteration=4)
    (c,) = m.changes
    assert (c.id, c.type, c.description, c.failure_pattern) == ("version", "improvement", "tighten the prompt",
                                                                "t7 loops")
    assert (c.predicted_fixes, c.risk_tasks, c.files, m.iteration) == (("t7", "t8"), ("t1",), files, 4)
    s = score_round(m, {"t7": False, "t8": False, "t1": True}, {"t7": True, "t8": False, "t1": True})
    assert s.changes[0].verdict is ChangeVerdict.PARTIALLY_EFFECTIVE
    s = score_round(m, {"t7": False, "t1": True}, {"t7": False, "t1": False})
    assert s.changes[0].verdict is ChangeVerdict.HARMFUL
    assert rollback_files(CURRENT, PREVIOUS, harmful_files(s)) == PREVIOUS
