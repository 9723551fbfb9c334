"""Scoring AHE change manifests on the next round: task outcomes over k rollouts, flips, verdicts, precision/recall.

Read from the released code (china-qijizhifeng/agentic-harness-engineering @96f3b64, ``evolve.py``) and the paper
(arXiv 2604.25850v4 §4.4.2, Fig. 4, App. D):

* **Task outcome** (``compute_stats``): a rollout passes iff its reward is >= 1.0; a rollout with no reward (an
  infrastructure error or time-out) is an *exception*. A task is ``pass`` iff every *recorded* rollout passed,
  ``exception`` iff every recorded rollout was an exception, else ``fail``. The code never compares the number of
  rollouts with k: a task with fewer than k recorded rollouts passes if those all passed. ``require_k=True`` is the
  paper's reading instead ("passes iff all k = 2 rollouts pass"): missing rollouts count as failed ones.
  ``exception_as_fail=True`` follows the paper's "infra failures & time-outs count as fail" (the code keeps them apart).
* **Transitions** (``compute_iteration_diff``): a task missing from one round counts as ``exception`` there, so it is
  never flipped or regressed (pass→missing is ``infra_lost``, missing→pass ``infra_recovered``). flipped = fail→pass,
  regressed = pass→fail; the other seven of the 3×3 states are kept in `RoundScore.transitions`.
* **Per change** (``evaluate_changes``): fixed = predicted_fixes ∩ flipped, still_failed = predicted − flipped,
  risk_realised = risk_tasks ∩ regressed, hit rate = |fixed| / |predicted| ("0/0" with no predictions). Verdict,
  first rule that holds: risk_realised ≠ ∅ and fixed = ∅ → HARMFUL; risk_realised ≠ ∅ and fixed ≠ ∅ → MIXED;
  |fixed| = |predicted| > 0 → EFFECTIVE; fixed ≠ ∅ → PARTIALLY_EFFECTIVE; otherwise INEFFECTIVE. Only *declared*
  risks count: a change whose unpredicted tasks regressed is never HARMFUL.
* **Unattributed regressions** (code): regressed tasks in no change's predicted_fixes *nor* risk_tasks. The digest's
  reading, regressed tasks in no change's risk_tasks, is `RoundScore.unpredicted_regressions` (the misses of
  regression recall).
* **Precision / recall** — not in the released code. The paper computes "standard precision and recall over the
  tasks" of the round-N−1 predictions against round-N truth, and its cumulative figures count *unique* predicted
  tasks (43 unique regression predictions, 5 landed, P = 11.6 %). So here, per round, with P = ∪ predicted_fixes and
  F = flipped: fix precision = |P ∩ F| / |P|, fix recall = |P ∩ F| / |F|; likewise ∪ risk_tasks against regressed.
  The digest's inferred precision Σ_c |pred_c ∩ F| / Σ_c |pred_c| (counts a task once per change naming it) is
  `PredictionPR.summed_precision`; the two agree when no two changes name the same task. Undefined ratios are None.
  Fig. 4 reports the mean of per-round values ("cross-iteration mean", `mean_pr`); App. D the pooled one (`pooled_pr`).
  Its "random baseline" is not defined in the text; `random_precision` = |truth| / n_tasks and `random_recall` =
  |predicted| / n_tasks are the expected values for a uniform random guess of the same size (inferred).

Not followed: the repo's later packaged skill (``skills/agentic-harness-engineering/scripts/verify_manifest.py``)
has another schema (``predicted_impact.expected_fixes`` / ``at_risk_regressions``) and a keep / revert / partial
verdict over the pooled predictions of all changes; the loop in ``evolve.py`` (above) is what the paper ran.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from evoarena.harness.changes import ChangeManifest

Outcome = Literal["pass", "fail", "exception"]
OUTCOMES: tuple[Outcome, ...] = ("pass", "fail", "exception")
Rollout = bool | float | None
TRANSITIONS: dict[tuple[Outcome, Outcome], str] = {
    ("fail", "pass"): "flipped", ("pass", "fail"): "regressed",
    ("exception", "pass"): "infra_recovered", ("pass", "exception"): "infra_lost",
    ("pass", "pass"): "stable_pass", ("fail", "fail"): "stable_fail",
    ("exception", "fail"): "exception_to_fail", ("fail", "exception"): "fail_to_exception",
    ("exception", "exception"): "exception_stable",
}


class ChangeVerdict(StrEnum):
    """The released verdicts, in rule order."""

    HARMFUL = "HARMFUL"
    MIXED = "MIXED"
    EFFECTIVE = "EFFECTIVE"
    PARTIALLY_EFFECTIVE = "PARTIALLY_EFFECTIVE"
    INEFFECTIVE = "INEFFECTIVE"


def rollout_outcome(value: Rollout) -> Outcome:
    """None = no reward (exception); a bool is pass/fail; a number passes iff >= 1.0 (NaN fails)."""
    if value is None:
        return "exception"
    if isinstance(value, bool):
        return "pass" if value else "fail"
    if isinstance(value, (int, float)):
        return "pass" if not math.isnan(value) and value >= 1.0 else "fail"
    raise TypeError(f"a rollout is a bool, a reward or None, got {value!r}")


def task_outcomes(rollouts: Mapping[str, Sequence[Rollout]], k: int = 2, *, require_k: bool = False,
                  exception_as_fail: bool = False) -> dict[str, Outcome]:
    """Per task: ``pass`` iff all recorded rollouts pass, ``exception`` iff all are exceptions, else ``fail``.

    A task with no recorded rollout is left out (it then counts as missing: ``exception``), as in the code; with
    ``require_k`` missing rollouts (fewer than k) count as failures, so such a task is ``fail``."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    out: dict[str, Outcome] = {}
    for task, values in rollouts.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise TypeError(f"task {task!r}: rollouts must be a sequence, got {type(values).__name__}")
        outs = [rollout_outcome(v) for v in values]
        if exception_as_fail:
            outs = ["fail" if o == "exception" else o for o in outs]
        if require_k and len(outs) < k:
            outs += ["fail"] * (k - len(outs))
        if not outs:
            continue
        out[task] = "pass" if all(o == "pass" for o in outs) else (
            "exception" if all(o == "exception" for o in outs) else "fail")
    return out


def task_pass(rollouts: Mapping[str, Sequence[Rollout]], k: int = 2, *, require_k: bool = False) -> dict[str, bool]:
    """True iff the task passes over its rollouts (`task_outcomes` == ``pass``); tasks without rollouts are left out."""
    return {t: o == "pass" for t, o in task_outcomes(rollouts, k, require_k=require_k).items()}


def _outcome(task: str, value: bool | str) -> Outcome:
    if isinstance(value, bool):
        return "pass" if value else "fail"
    for o in OUTCOMES:
        if value == o:
            return o
    raise ValueError(f"task {task!r}: outcome must be a bool or one of {', '.join(OUTCOMES)}, got {value!r}")


@dataclass(frozen=True)
class ChangeScore:
    """One change judged on the next round, with the verdict of the released rules."""

    change_id: str
    files: tuple[str, ...]
    predicted_fixes: tuple[str, ...]
    fixed: tuple[str, ...]
    still_failed: tuple[str, ...]
    risk_tasks: tuple[str, ...]
    risk_realised: tuple[str, ...]
    verdict: ChangeVerdict

    @property
    def hit_rate(self) -> float | None:
        return len(self.fixed) / len(self.predicted_fixes) if self.predicted_fixes else None

    @property
    def hit_rate_text(self) -> str:
        return f"{len(self.fixed)}/{len(self.predicted_fixes)}"

    def to_dict(self) -> dict[str, object]:
        return {"change_id": self.change_id, "files": list(self.files), "predicted_fixes": list(self.predicted_fixes),
                "actually_fixed": list(self.fixed), "still_failed": list(self.still_failed),
                "predicted_risks": list(self.risk_tasks), "risk_realized": list(self.risk_realised),
                "hit_rate": self.hit_rate_text, "verdict": self.verdict.value}


def verdict(n_fixed: int, n_predicted: int, n_risk_realised: int) -> ChangeVerdict:
    """The released rule chain (evolve.py `evaluate_changes`), first match wins."""
    if n_risk_realised > 0:
        return ChangeVerdict.MIXED if n_fixed > 0 else ChangeVerdict.HARMFUL
    if n_predicted > 0 and n_fixed == n_predicted:
        return ChangeVerdict.EFFECTIVE
    return ChangeVerdict.PARTIALLY_EFFECTIVE if n_fixed > 0 else ChangeVerdict.INEFFECTIVE


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


@dataclass(frozen=True)
class PredictionPR:
    """Predicted tasks (union over changes) against what happened (flipped or regressed), over `n_tasks` tasks."""

    predicted: tuple[str, ...]
    actual: tuple[str, ...]
    hits: tuple[str, ...]
    n_tasks: int
    summed_predictions: int
    summed_hits: int

    @property
    def precision(self) -> float | None:
        return _ratio(len(self.hits), len(self.predicted))

    @property
    def recall(self) -> float | None:
        return _ratio(len(self.hits), len(self.actual))

    @property
    def summed_precision(self) -> float | None:
        return _ratio(self.summed_hits, self.summed_predictions)

    @property
    def random_precision(self) -> float | None:
        return _ratio(len(self.actual), self.n_tasks)

    @property
    def random_recall(self) -> float | None:
        return _ratio(min(len(self.predicted), self.n_tasks), self.n_tasks)

    def to_dict(self) -> dict[str, object]:
        return {"predicted": list(self.predicted), "actual": list(self.actual), "hits": list(self.hits),
                "precision": self.precision, "recall": self.recall, "summed_precision": self.summed_precision,
                "random_precision": self.random_precision, "random_recall": self.random_recall}


def _pr(per_change: Sequence[tuple[str, ...]], actual: tuple[str, ...], n_tasks: int) -> PredictionPR:
    truth = set(actual)
    union = sorted(set().union(*per_change)) if per_change else []
    return PredictionPR(predicted=tuple(union), actual=actual, hits=tuple(t for t in union if t in truth),
                        n_tasks=n_tasks, summed_predictions=sum(len(p) for p in per_change),
                        summed_hits=sum(1 for p in per_change for t in p if t in truth))


@dataclass(frozen=True)
class RoundScore:
    """What a manifest's next round showed: transitions, per-change verdicts, unattributed regressions and P/R."""

    flipped: tuple[str, ...]
    regressed: tuple[str, ...]
    transitions: Mapping[str, tuple[str, ...]]
    changes: tuple[ChangeScore, ...]
    unattributed_regressions: tuple[str, ...]
    unpredicted_regressions: tuple[str, ...]
    fix: PredictionPR
    regression: PredictionPR
    iteration: int | None = None
    n_tasks: int = field(default=0)

    def verdicts(self) -> dict[str, ChangeVerdict]:
        return {c.change_id: c.verdict for c in self.changes}

    def summary(self) -> str:
        """One line as the released report prints it: ``chg-1: HARMFUL, chg-2: EFFECTIVE``."""
        return ", ".join(f"{c.change_id}: {c.verdict.value}" for c in self.changes)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready figures for a method's report."""
        return {"evaluating_iteration": self.iteration, "n_tasks": self.n_tasks, "flipped": list(self.flipped),
                "regressed": list(self.regressed), "net": len(self.flipped) - len(self.regressed),
                "transitions": {k: list(v) for k, v in self.transitions.items()},
                "change_evaluations": [c.to_dict() for c in self.changes],
                "unattributed_regressions": list(self.unattributed_regressions),
                "unpredicted_regressions": list(self.unpredicted_regressions),
                "fix_prediction": self.fix.to_dict(), "regression_prediction": self.regression.to_dict(),
                "summary": self.summary()}


def score_round(manifest: ChangeManifest, before: Mapping[str, bool | str],
                after: Mapping[str, bool | str]) -> RoundScore:
    """Score `manifest` (written after the `before` round) on the `after` round.

    `before`/`after` map task id → outcome (``pass``/``fail``/``exception``, or a bool); a task absent from one side
    counts as ``exception`` there. Lists come out in task-id order, per-change lists in the manifest's order."""
    prev = {t: _outcome(t, v) for t, v in before.items()}
    cur = {t: _outcome(t, v) for t, v in after.items()}
    buckets: dict[str, list[str]] = {name: [] for name in TRANSITIONS.values()}
    tasks = sorted(set(prev) | set(cur))
    for task in tasks:
        buckets[TRANSITIONS[(prev.get(task, "exception"), cur.get(task, "exception"))]].append(task)
    transitions = {name: tuple(ts) for name, ts in buckets.items()}
    flipped, regressed = transitions["flipped"], transitions["regressed"]
    flipped_set, regressed_set = set(flipped), set(regressed)
    scores = []
    for c in manifest.changes:
        fixed = tuple(t for t in c.predicted_fixes if t in flipped_set)
        realised = tuple(t for t in c.risk_tasks if t in regressed_set)
        scores.append(ChangeScore(
            change_id=c.id, files=c.files, predicted_fixes=c.predicted_fixes, fixed=fixed,
            still_failed=tuple(t for t in c.predicted_fixes if t not in flipped_set), risk_tasks=c.risk_tasks,
            risk_realised=realised, verdict=verdict(len(fixed), len(c.predicted_fixes), len(realised))))
    predicted_all = {t for c in manifest.changes for t in c.predicted_fixes}
    risk_all = {t for c in manifest.changes for t in c.risk_tasks}
    return RoundScore(
        flipped=flipped, regressed=regressed, transitions=transitions, changes=tuple(scores),
        unattributed_regressions=tuple(t for t in regressed if t not in predicted_all | risk_all),
        unpredicted_regressions=tuple(t for t in regressed if t not in risk_all),
        fix=_pr([c.predicted_fixes for c in manifest.changes], flipped, len(tasks)),
        regression=_pr([c.risk_tasks for c in manifest.changes], regressed, len(tasks)),
        iteration=manifest.iteration, n_tasks=len(tasks))


def harmful_files(score: RoundScore, verdicts: Iterable[ChangeVerdict] = (ChangeVerdict.HARMFUL,)) -> tuple[str, ...]:
    """Files of the changes to roll back (HARMFUL by default; the released report also suggests INEFFECTIVE).

    A file that a kept change also edited is rolled back all the same: rollback is file-level, as in AHE."""
    wanted = set(verdicts)
    return tuple(sorted({f for c in score.changes if c.verdict in wanted for f in c.files}))


def pooled_pr(prs: Iterable[PredictionPR]) -> tuple[float | None, float | None]:
    """Precision, recall of rounds pooled (App. D's "cumulative"): Σ hits / Σ predicted, Σ hits / Σ actual."""
    items = list(prs)
    hits = sum(len(p.hits) for p in items)
    return (_ratio(hits, sum(len(p.predicted) for p in items)), _ratio(hits, sum(len(p.actual) for p in items)))


def mean_pr(prs: Iterable[PredictionPR]) -> tuple[float | None, float | None]:
    """Mean of per-round precision and recall (Fig. 4's "cross-iteration mean"); rounds where one is undefined are
    skipped for it (inferred: the paper does not say)."""
    items = list(prs)
    ps = [p.precision for p in items if p.precision is not None]
    rs = [p.recall for p in items if p.recall is not None]
    return (sum(ps) / len(ps) if ps else None, sum(rs) / len(rs) if rs else None)
