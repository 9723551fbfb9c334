"""build_results: per-task scores, ledger rows and cell budgets -> the run record results.json is dumped from."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from evoarena.codec import to_plain

from .headroom import headroom
from .power import z_sum
from .records import EVIDENCE_LEVELS, SPLITS, CallRecord, CellBudget, RunMeta, ScoreRecord
from .results_record import RunResults
from .stats import BOOTSTRAP_METHOD, bootstrap_ci, clean, mean
from .versus import task_means, versus_baseline

SCHEMA_VERSION = 1
CI_LEVEL = 0.95
N_RESAMPLES = 2000
# every interval resamples with this one seed: a CI is a function of its scores alone, so identical per-task scores
# give identical intervals whatever condition, model, split or run they belong to
BOOTSTRAP_SEED = 0


def _none_last(value: str | None) -> tuple[bool, str]:
    return (value is None, value or "")


def _check_scores(scores: Sequence[ScoreRecord]) -> None:
    seen: set[tuple[str, str, int, str, str]] = set()
    for r in scores:
        if r.split not in SPLITS:
            raise ValueError(f"score record {r.task_id!r}: split must be one of {SPLITS}, got {r.split!r}")
        if not r.error and not (math.isfinite(r.score) and 0.0 <= r.score <= 1.0):
            raise ValueError(f"score record {r.task_id!r}: score must be in [0, 1], got {r.score!r}")
        key = (r.condition, r.model, r.seed, r.split, r.task_id)
        if key in seen:
            raise ValueError(f"duplicate score record for {key}")
        seen.add(key)


def _ci(values: Sequence[float]) -> dict[str, float]:
    m, low, high = bootstrap_ci(values, seed=BOOTSTRAP_SEED, n_resamples=N_RESAMPLES, level=CI_LEVEL)
    return {"mean": m, "ci_low": low, "ci_high": high}


def _split_summary(records: Sequence[ScoreRecord]) -> dict[str, Any]:
    """Accuracy of one (condition, model, split)'s records: tasks are the resampling unit.

    Each task's score is first averaged over the seeds that graded it; the mean and CI are over those
    task means (equal to the plain pooled mean when every seed graded every task). Error records
    are left out of every mean and only counted.
    """
    by_task: dict[str, list[float]] = defaultdict(list)
    by_seed: dict[int, list[ScoreRecord]] = defaultdict(list)
    for r in records:
        by_seed[r.seed].append(r)
        if not r.error:
            by_task[r.task_id].append(r.score)
    task_means = [mean(by_task[t]) for t in sorted(by_task)]
    per_seed = []
    for seed in sorted(by_seed):
        graded = [r.score for r in by_seed[seed] if not r.error]
        per_seed.append(
            {
                "seed": seed,
                "mean": mean(graded),
                "n_tasks": len(graded),
                "n_errors": sum(1 for r in by_seed[seed] if r.error),
            }
        )
    seed_means = [s["mean"] for s in per_seed if s["n_tasks"] > 0]
    verdicts: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if not r.error and r.passed is not None:
            verdicts[r.task_id].append(float(r.passed))
    pass_rate = None
    if verdicts:  # "hard" accuracy next to the mean score ("cell" accuracy for partial-credit graders)
        pass_rate = _ci([mean(verdicts[t]) for t in sorted(verdicts)])
    seed_ci = None
    if len(seed_means) >= 2:
        seed_ci = {**_ci(seed_means), "n_seeds": len(seed_means)}
    return {
        **_ci(task_means),
        "n_tasks": len(task_means),
        "n_graded": sum(len(v) for v in by_task.values()),
        "n_errors": sum(1 for r in records if r.error),
        "n_seeds": len(by_seed),
        "per_seed": per_seed,
        "seed_ci": seed_ci,
        "pass_rate": pass_rate,
    }


def _conditions(scores: Sequence[ScoreRecord], budgets: Sequence[CellBudget]) -> list[dict[str, Any]]:
    grouped: dict[tuple[str, str, str], list[ScoreRecord]] = defaultdict(list)
    for r in scores:
        grouped[(r.condition, r.model, r.split)].append(r)
    pairs = {(r.condition, r.model) for r in scores} | {(b.condition, b.model) for b in budgets}
    out = []
    for condition, model in sorted(pairs):
        row: dict[str, Any] = {"condition": condition, "model": model}
        for split in SPLITS:
            recs = grouped.get((condition, model, split))
            row[split] = _split_summary(recs) if recs else None
        out.append(row)
    return out


def call_stats(rows: Iterable[CallRecord]) -> dict[str, Any]:
    """Counts and sums over ledger rows. Cached calls count in every total and are also broken out."""
    rows = list(rows)
    cached = [r for r in rows if r.cached]
    # a cache hit computes nothing: only paid calls a backend reported on count (the same at any concurrency)
    known = [r.input_tokens_evaluated for r in rows if not r.cached and r.input_tokens_evaluated is not None]
    return {
        "calls": len(rows),
        "cached_calls": len(cached),
        "errors": sum(1 for r in rows if r.error is not None),
        "input_tokens": sum(r.input_tokens for r in rows),
        "output_tokens": sum(r.output_tokens for r in rows),
        "cost_usd": math.fsum(r.cost_usd for r in rows),
        "latency_s": math.fsum(r.latency_s for r in rows),
        "cached_input_tokens": sum(r.input_tokens for r in cached),
        "cached_output_tokens": sum(r.output_tokens for r in cached),
        "cached_cost_usd": math.fsum(r.cost_usd for r in cached),
        # prompt tokens the model computed (the rest reused from a kept prefix); absent where no backend said
        "input_tokens_evaluated": sum(known) if known else None,
    }


def _breakdown(rows: Sequence[CallRecord]) -> dict[str, Any]:
    by_role: dict[str, list[CallRecord]] = defaultdict(list)
    by_phase: dict[str, list[CallRecord]] = defaultdict(list)
    for r in rows:
        by_role[r.role].append(r)
        by_phase[r.phase].append(r)
    return {
        "totals": call_stats(rows),
        "by_role": {k: call_stats(by_role[k]) for k in sorted(by_role)},
        "by_phase": {k: call_stats(by_phase[k]) for k in sorted(by_phase)},
    }


def _calls(calls: Sequence[CallRecord]) -> dict[str, Any]:
    by_condition: dict[str | None, list[CallRecord]] = defaultdict(list)
    cells: dict[tuple[str | None, str | None, str, str], list[CallRecord]] = defaultdict(list)
    for r in calls:
        by_condition[r.condition].append(r)
        cells[(r.condition, r.model, r.role, r.phase)].append(r)
    rows = [
        {"condition": c, "model": m, "role": role, "phase": phase, **call_stats(cells[(c, m, role, phase)])}
        for c, m, role, phase in sorted(cells, key=lambda k: (_none_last(k[0]), _none_last(k[1]), k[2], k[3]))
    ]
    return {
        **_breakdown(calls),
        "by_condition": [
            {"condition": c, **_breakdown(by_condition[c])} for c in sorted(by_condition, key=_none_last)
        ],
        "rows": rows,
    }


def _roles(calls: Sequence[CallRecord]) -> list[dict[str, Any]]:
    """Which model played each role of each condition, from the ledger (None: the calls made outside any cell)."""
    played: dict[tuple[str | None, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in calls:
        played[(r.condition, r.role)][r.played_by or r.model_id] += 1
    return [{"condition": c, "role": role, "models": dict(sorted(played[(c, role)].items()))}
            for c, role in sorted(played, key=lambda k: (_none_last(k[0]), k[1]))]


def _budgets(budgets: Sequence[CellBudget]) -> list[dict[str, Any]]:
    seen: set[tuple[str, str, int]] = set()
    out = []
    for b in sorted(budgets, key=lambda b: (b.condition, b.model, b.seed)):
        key = (b.condition, b.model, b.seed)
        if key in seen:
            raise ValueError(f"duplicate budget for cell {key}")
        seen.add(key)
        fraction: dict[str, float] = {}
        for name, limit in b.limits.items():
            used_key = name.removeprefix("max_")
            if limit and used_key in b.used:
                fraction[used_key] = b.used[used_key] / limit
        out.append(
            {
                "condition": b.condition,
                "model": b.model,
                "seed": b.seed,
                "limits": dict(b.limits),
                "used": dict(b.used),
                "fraction_used": fraction,
                "exhausted": b.exhausted,
            }
        )
    return out


def build_results(
    meta: RunMeta,
    scores: Sequence[ScoreRecord],
    calls: Sequence[CallRecord],
    budgets: Sequence[CellBudget],
    order: Sequence[str] = (),
    references: Sequence[str] = (),
) -> RunResults:
    """The run record (without probes and views). Deterministic and independent of input order; floats rounded.
    `order`: the spec's conditions, the first being the baseline of `versus_baseline`; `references`: the conditions
    that install a reference harness, whose difference to the baseline is the headroom."""
    if meta.evidence not in EVIDENCE_LEVELS:
        raise ValueError(f"meta.evidence must be one of {EVIDENCE_LEVELS}, got {meta.evidence!r}")
    _check_scores(scores)
    versus = versus_baseline(scores, order, n_resamples=N_RESAMPLES, level=CI_LEVEL, seed=BOOTSTRAP_SEED)
    results = {
        "schema_version": SCHEMA_VERSION,
        "meta": to_plain(meta),
        "evidence": meta.evidence,
        "stats": {
            "ci_level": CI_LEVEL,
            "n_resamples": N_RESAMPLES,
            "method": f"{BOOTSTRAP_METHOD} bootstrap of the mean (scipy.stats.bootstrap)",
            "unit": "task: per-task scores averaged over seeds, then tasks resampled",
            "seed_ci": "over per-seed means, when at least 2 seeds have graded tasks",
            "bootstrap_seed": f"{BOOTSTRAP_SEED} for every interval: a CI depends only on the scores resampled, so "
                              "identical per-task scores give identical intervals in any condition or run",
            "errors": "provider errors are excluded from accuracy and counted in n_errors",
            "pass_rate": "share of tasks the grader passed (all-or-nothing, 'hard'); mean is the mean score",
            "versus_baseline": "test score minus the spec's first condition's (same model), per task both graded "
                               "(seed-averaged), tasks resampled",
            "mde": "minimum detectable paired difference at 80% power, two-sided alpha 0.05 (normal approximation): "
                   f"z * sqrt(v / (n + z^2)), z = {z_sum():.2f}, n the paired tasks, v the baseline's per-task "
                   "variance (shrunk to p(1-p), p = (sum + 1) / (n + 2), when its scores are all equal)",
        },
        "conditions": _conditions(scores, budgets),
        "versus_baseline": versus,
        "calls": _calls(calls),
        "roles": _roles(calls),
        "budgets": _budgets(budgets),
        "headroom": headroom(versus, references, task_means(scores), seed=BOOTSTRAP_SEED, n_resamples=N_RESAMPLES,
                             level=CI_LEVEL),
    }
    return RunResults.model_validate(clean(results))
