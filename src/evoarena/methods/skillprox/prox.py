"""SkillProx's backward step (Prox) on the forward result X_f, run once on a fixed validation set V.

Frozen utility audit: one baseline evaluation of X_f on V and one per knowledge unit with that unit ablated;
u_cell = C_V(X_f) - C_V(ablated), u_hard likewise (a negative utility: removing the unit helps). Candidates
I_tau = {u_cell < tau}, in lexicographic (u_cell, u_hard) order, scores frozen. Single pass: before each trial the
soft cap stops new trials once 1 - G(current)/G(X_f) >= rho; the shrinker applies one light edit to the current
skill (merge into the most overlapping kept unit then remove, demote an L2 section into L3, or delete), touching
the target and at most one receiving unit; the edit is kept iff struct_ok, strictly shorter, and on V
H >= H(current) - delta_h and C >= C(current) - delta_c. Evaluations: (n + M)|V| + |V| solver runs, where M is the
number of trials that reached V (replies refused by the structural checks cost no evaluation).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evoarena.api import PracticeContext, TaskView
from evoarena.methods.prompting import render_prompt
from evoarena.methods.skillprox.common import TOL, Batch, evaluate, evaluate_trees
from evoarena.methods.skillprox.forward import set_skill
from evoarena.methods.skillprox.patch import Patch, locality_problems, parse_patch
from evoarena.methods.skillprox.skill import (
    Skill,
    Unit,
    ablate,
    char_stats,
    render,
    size,
    skill_diff,
    skill_of,
    struct_problems,
    units,
    with_skill,
)
from evoarena.methods.skillprox.state import ProxRecord, ProxSummary, Score, Trial, UnitAudit
from evoarena.search import NonRegression

ACTIONS = ("merge", "demote", "delete")
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class ProxConfig:
    tau: float
    delta_h: float
    delta_c: float
    rho: float


def overlaps(target: Unit, others: Sequence[Unit]) -> list[dict[str, Any]]:
    """Other units by word overlap (Jaccard) with the target, highest first: the merge receiver hint."""
    words = set(_WORD.findall(target.text.lower()))
    out = []
    for u in others:
        if u.uid == target.uid:
            continue
        other = set(_WORD.findall(u.text.lower()))
        union = words | other
        out.append({"uid": u.uid, "overlap": round(len(words & other) / len(union), 3) if union else 0.0})
    return sorted(out, key=lambda o: -float(o["overlap"]))


def candidates(audit: Sequence[UnitAudit], tau: float) -> list[UnitAudit]:
    """I_tau in processing order: u_cell < tau, sorted by (u_cell, u_hard); ties keep unit order."""
    chosen = [a for a in audit if a.u_cell < tau - TOL]
    return sorted(chosen, key=lambda a: (round(a.u_cell, 9), round(a.u_hard, 9)))


class ProxStep:
    def __init__(self, ctx: PracticeContext, cfg: ProxConfig) -> None:
        self.ctx = ctx
        self.cfg = cfg

    def run(self, val: Sequence[TaskView]) -> ProxRecord:
        """Audit and shrink the live skill on `val`; writes the final skill; returns the full record."""
        ctx, cfg = self.ctx, self.cfg
        tree = ctx.harness.tree()
        skill_f = skill_of(tree)
        g_f = size(skill_f)
        found = units(skill_f)  # the baseline and every ablation are independent: one batch of re-executions
        base, *ablated = evaluate_trees(ctx, [tree, *(with_skill(tree, ablate(skill_f, u.uid)) for u in found)], val)
        audit = []
        for u, r in zip(found, ablated, strict=True):
            audit.append(UnitAudit(uid=u.uid, kind=u.kind, name=u.name, chars=len(u.text), H=r.hard, C=r.cell,
                                   u_hard=base.hard - r.hard, u_cell=base.cell - r.cell))
        order = candidates(audit, cfg.tau)
        ctx.log("skillprox_audit", {"val": [t.id for t in val], "baseline": {"H": base.hard, "C": base.cell},
                                    "units": [a.model_dump() for a in audit], "order": [a.uid for a in order],
                                    "G": g_f})
        current, cur = skill_f, base
        trials: list[Trial] = []
        stopped = False
        for a in order:
            compression = 1 - size(current) / g_f if g_f else 0.0
            if stopped or compression >= cfg.rho:
                stopped = True
                trials.append(Trial(uid=a.uid, verdict="not_tried",
                                    reason=f"soft cap: compression {compression:.3f} >= rho {cfg.rho}"))
                continue
            trial, shrunk, measured = self._trial(tree, current, cur, a, val)
            trials.append(trial)
            ctx.log("skillprox_shrink", trial.model_dump())
            if shrunk is not None and measured is not None:
                current, cur = shrunk, measured
        set_skill(ctx, skill_f, current)
        evaluated = sum(1 for t in trials if t.H is not None)
        accepted = sum(1 for t in trials if t.verdict == "accepted")
        summary = ProxSummary(
            val=len(val), units=len(audit), candidates=len(order), trials=sum(
                1 for t in trials if t.verdict not in ("not_tried", "gone")), evaluated=evaluated,
            accepted=accepted, stopped_by_soft_cap=stopped, G_f=g_f, G_final=size(current),
            compression=1 - size(current) / g_f if g_f else 0.0,
            baseline=Score(H=base.hard, C=base.cell), final=Score(H=cur.hard, C=cur.cell),
            chars_before=char_stats(skill_f), chars_after=char_stats(current),
            val_rollouts=(len(audit) + evaluated) * len(val) + len(val),
            diff=skill_diff(skill_f, current),
        )
        ctx.log("skillprox_prox", summary.model_dump())
        return ProxRecord(val=[t.id for t in val], baseline=base.row(), units=audit, order=[a.uid for a in order],
                          trials=trials, summary=summary)

    def _trial(self, tree: Mapping[str, str], current: Skill, cur: Batch, a: UnitAudit,
               val: Sequence[TaskView]) -> tuple[Trial, Skill | None, Batch | None]:
        """The trial on unit `a`, and the shrunk skill with its measure on V when the edit is accepted."""
        ctx, cfg = self.ctx, self.cfg
        trial = Trial(uid=a.uid, u_cell=a.u_cell, u_hard=a.u_hard, G_before=size(current))
        present = {u.uid: u for u in units(current)}
        if a.uid not in present:
            trial.verdict, trial.reason = "gone", "the unit no longer exists (an earlier edit merged or removed it)"
            return trial, None, None
        target = present[a.uid]
        prompt = render_prompt(
            __package__, "shrink", skill=render(current), target=target, u_cell=f"{a.u_cell:+.4f}",
            u_hard=f"{a.u_hard:+.4f}", overlaps=overlaps(target, list(present.values()))[:3],
            H=f"{cur.hard:.3f}", C=f"{cur.cell:.3f}", delta_h=cfg.delta_h, delta_c=cfg.delta_c)
        reply = ctx.ask("shrinker", prompt)
        if reply is None:
            trial.verdict, trial.reason = "refused", "shrinker call failed"
            return trial, None, None
        raw = reply.text
        parsed = parse_patch(raw, current, extra=("action", "receiver"))
        why = parsed if isinstance(parsed, str) else self._problems(current, parsed, target.uid)
        if not why and reply.cut_off:
            why = "shrinker output cut off at max_tokens"
        if why or not isinstance(parsed, Patch):
            ctx.reject("shrink", raw, why)
            trial.verdict, trial.reason = "refused", why
            return trial, None, None
        r = evaluate(ctx, with_skill(tree, parsed.skill), val)
        ok_h = NonRegression(tolerance=cfg.delta_h, slack=TOL).decide([cur.hard], [r.hard]).accepted
        ok_c = NonRegression(tolerance=cfg.delta_c, slack=TOL).decide([cur.cell], [r.cell]).accepted
        reason = (f"val hard {cur.hard:.3f} -> {r.hard:.3f} (tolerance {cfg.delta_h}), cell {cur.cell:.3f} -> "
                  f"{r.cell:.3f} (tolerance {cfg.delta_c})")
        trial.verdict, trial.reason = "accepted" if ok_h and ok_c else "rejected", reason
        trial.H, trial.C = r.hard, r.cell
        trial.action, trial.receiver = parsed.extra["action"], parsed.extra["receiver"]
        trial.summary, trial.G_after, trial.diff = parsed.summary, size(parsed.skill), skill_diff(current, parsed.skill)
        return (trial, parsed.skill, r) if trial.verdict == "accepted" else (trial, None, None)

    @staticmethod
    def _problems(current: Skill, patch: Patch, target: str) -> str:
        """Why a shrink is refused before evaluation: unknown action, broken structure, non-local, not shorter."""
        if patch.extra["action"] not in ACTIONS:
            return f"action {patch.extra['action']!r} is not one of {', '.join(ACTIONS)}"
        problems = struct_problems(patch.skill)
        if problems:
            return f"breaks the skill structure: {'; '.join(problems)}"
        local = locality_problems(current, patch.skill, target)
        if local:
            return f"not a local edit: {'; '.join(local)}"
        if size(patch.skill) >= size(current):
            return f"not strictly shorter: G {size(current)} -> {size(patch.skill)}"
        return ""
