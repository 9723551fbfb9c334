"""The SkillProx views of a run (results.json `views.skillprox`), read from the harness files of each cell's graded
version: skill length (SKILL.md vs active references), compression by Prox against X_f, the forward phase's
candidates by outcome and reason, the accepted-iteration share, writes per diagnosis, the per-iteration H/C, and
the Prox unit audit (utilities, candidate order, the shrinker's edit and its verdict).

Why the harness files and not the `skillprox_*` events: events are written outside a unit's transaction, so a
resumed unit may have logged them twice; the files under `memory/skillprox/` travel with the version that was
graded, exactly once. Test hard and cell accuracy (with CIs) are copied from results.json's conditions, where
`test.pass_rate` is hard and `test.mean` is cell accuracy (the sheets benchmark's score). The registered view that
puts them in the report is report_view.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from evoarena.api.views import ConditionResult, ReportContext
from evoarena.harness.state import parse_records, parse_state
from evoarena.methods.skillprox.common import ITERATIONS, PROX, STATE
from evoarena.methods.skillprox.method import SkillProx
from evoarena.methods.skillprox.skill import char_stats, size, skill_of, units
from evoarena.methods.skillprox.state import IterationRecord, ProxRecord, State
from evoarena.methods.skillprox.view_plots import chars_plot, tradeoff_plot
from evoarena.report.stats import clean

SHOWN_PARAMS = ("forward", "diagnosis", "prox", "iterations", "batch_size", "max_candidates", "val_size", "tau",
                "delta_h", "delta_c", "rho")
ACCEPTED = ("accepted", "committed")


def reason_category(outcome: str, reason: str) -> str:
    """A short, countable reason for a candidate that was not adopted."""
    if outcome == "rejected":
        drops = [k for k in ("hard", "cell") if f"{k} accuracy dropped" in reason]
        return f"{' and '.join(drops)} dropped on the batch" if drops else "gate failed"
    if outcome == "not_selected":
        return "passed the gate; a better candidate was kept"
    if outcome == "malformed":
        head = reason.split(":", 1)[0].strip() or "malformed"
        return head if len(head) <= 60 else head[:57] + "..."
    return outcome


def candidate_counts(iterations: Sequence[IterationRecord]) -> dict[str, Any]:
    """Candidates proposed, adopted (accepted or committed) and not adopted, by outcome and by reason."""
    cands = [c for it in iterations for c in it.candidates]
    outcomes = Counter(c.outcome for c in cands)
    reasons = Counter(f"{c.outcome}: {reason_category(c.outcome, c.reason)}" for c in cands
                      if c.outcome not in ACCEPTED)
    return {"proposed": len(cands), "adopted": sum(outcomes[o] for o in ACCEPTED), "rejected": outcomes["rejected"],
            "malformed": outcomes["malformed"], "not_selected": outcomes["not_selected"],
            "by_outcome": dict(sorted(outcomes.items())), "by_reason": dict(sorted(reasons.items()))}


def iteration_rows(iterations: Sequence[IterationRecord]) -> list[dict[str, Any]]:
    out = []
    for it in iterations:
        after = it.after
        out.append({"iteration": it.iteration, "batch": len(it.batch), "outcome": it.outcome,
                    "chosen": it.chosen, "candidates": [c.outcome for c in it.candidates],
                    "H_before": it.before.H, "C_before": it.before.C, "H_after": after.H if after else None,
                    "C_after": after.C if after else None, "G_before": it.G_before, "G_after": it.G_after})
    return out


def audit_rows(prox: ProxRecord, final_units: set[str]) -> list[dict[str, Any]]:
    """One row per knowledge unit of X_f: utilities, candidate rank, the shrink trial (if any) and whether the unit
    is still in the deployed skill."""
    order = prox.order
    trials = {t.uid: t.model_dump() for t in prox.trials}
    rows = []
    for u in prox.units:
        t = trials.get(u.uid, {})
        rows.append({"unit": u.uid, "kind": u.kind, "name": u.name, "chars": u.chars,
                     "u_cell": u.u_cell, "u_hard": u.u_hard, "H_without": u.H, "C_without": u.C,
                     "candidate": u.uid in order, "rank": order.index(u.uid) + 1 if u.uid in order else None,
                     "action": t.get("action"), "receiver": t.get("receiver"), "edit": t.get("summary"),
                     "verdict": t.get("verdict"), "reason": t.get("reason"), "G_after": t.get("G_after"),
                     "in_final": u.uid in final_units})
    return rows


def cell_view(tree: Mapping[str, str]) -> dict[str, Any]:
    """Everything the report shows of one SkillProx cell, from the harness tree of its graded version."""
    skill = skill_of(tree)
    state = parse_state(STATE, tree[STATE], State) if STATE in tree else None
    iterations = parse_records(ITERATIONS, tree.get(ITERATIONS, ""), IterationRecord)
    prox = parse_state(PROX, tree[PROX], ProxRecord) if PROX in tree else None
    fwd = state.forward_end.model_dump() if state is not None and state.forward_end is not None else {}
    prox_summary = None
    if prox is not None:
        prox_summary = prox.summary.model_dump(exclude={"diff"})
        prox_summary["verdicts"] = dict(sorted(Counter(t.verdict for t in prox.trials).items()))
    return {
        "phase": state.phase if state is not None else None,
        "final_chars": char_stats(skill),
        "G": size(skill),
        "forward": {k: fwd.get(k) for k in ("reason", "iterations", "update_iterations", "accepted_iterations",
                                             "accepted_share", "candidates", "diagnoses", "writes",
                                             "writes_per_diagnosis", "chars_written_per_diagnosis", "G")},
        "X_f_chars": fwd.get("chars"),
        "candidates": candidate_counts(iterations),
        "iterations": iteration_rows(iterations),
        "prox": prox_summary,
        "audit": audit_rows(prox, {u.uid for u in units(skill)}) if prox is not None else None,
    }


def _test(conditions: Sequence[ConditionResult], condition: str, model: str) -> dict[str, Any] | None:
    row = next((c for c in conditions if c.condition == condition and c.model == model), None)
    test = row.test if row else None
    if not test:
        return None
    cell = {"mean": test.mean, "ci_low": test.ci_low, "ci_high": test.ci_high}
    return {"cell": cell, "hard": test.pass_rate.model_dump() if test.pass_rate else None, "n_tasks": test.n_tasks}


def skillprox_views(ctx: ReportContext) -> dict[str, Any]:
    """`views.skillprox`: one row per SkillProx cell (spec order, then seed), the other conditions as baselines."""
    methods = ctx.spec_methods
    order = {str(m.get("label") or m["name"]): i for i, m in enumerate(methods)}
    params = {str(m.get("label") or m["name"]): {**SkillProx.defaults, **m.get("params", {})}
              for m in methods if m["name"] == SkillProx.name}
    cells = sorted((c for c in ctx.run_cells() if c.status == "done"),
                   key=lambda c: (order.get(c.condition, len(order)), c.condition, c.model, c.seed))
    rows, baselines = [], []
    for c in cells:
        test = _test(ctx.conditions, c.condition, c.model)
        if c.method != SkillProx.name:
            baselines.append({"condition": c.condition, "method": c.method, "model": c.model, "seed": c.seed,
                              "test": test})
            continue
        version = c.selected_version or c.current_version
        assert version is not None, f"SkillProx cell {c.cell} finished without a version"
        p = params.get(c.condition, SkillProx.defaults)
        rows.append({"condition": c.condition, "model": c.model, "seed": c.seed, "version": version,
                     "params": {k: p.get(k) for k in SHOWN_PARAMS}, "test": test, **cell_view(ctx.tree(version))})
    if not rows:
        return {}
    evidence = ctx.evidence
    view = {"cells": rows, "baselines": baselines}
    cleaned: dict[str, Any] = clean(view)
    cleaned["chars_plot"] = chars_plot(cleaned["cells"], evidence)
    cleaned["tradeoff_plot"] = tradeoff_plot(cleaned["cells"], cleaned["baselines"], evidence)
    return cleaned
