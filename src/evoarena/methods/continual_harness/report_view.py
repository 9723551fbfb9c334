"""Continual Harness's report view (results.json `views.continual_harness`, its report.html section): per cell the
practice episodes one by one — score, refinements, skill reverts, rejected refiner output, the episode's stuck rate —
with the seeds' AUC and late mean as EvoTest's view computes them, the stuck rate of every refinement window over the
harness's age, and what the refiner did inside the test episodes (whose edits end with each episode); another arm's
curve is its submitted practice attempts."""

from __future__ import annotations

import json
from typing import Any

from evoarena.api import view
from evoarena.api.views import ReportContext, TemplateView
from evoarena.envs.curves import condition_means, curve, episode_events, practice_curve
from evoarena.store.queries import cells, episode_attempts


def _test_refinements(answers: list[str | None]) -> dict[str, Any]:
    """Refinements and reverts inside a cell's test episodes, read from their traces."""
    episodes, refinements, reverted = 0, 0, 0
    for answer in answers:
        try:
            trace = json.loads(answer or "{}").get("trace", [])
        except (ValueError, AttributeError):
            continue
        episodes += 1
        for step in trace:
            r = (step.get("agent") or {}).get("refinement")
            if r:
                refinements += 1
                reverted += len(r.get("reverted", []))
    return {"episodes": episodes, "refinements": refinements, "reverted": reverted}


@view("continual_harness")
class ContinualHarnessView(TemplateView):
    """Continual Harness: per-episode scores, refinements, reverts and stuck rates, AUC and late mean."""

    method = "continual_harness"
    template = ("evoarena.methods.continual_harness", "report_view.html.j2")

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        logged = episode_events(ctx.store, "continual_episode")
        if not logged:
            return None
        rows: list[dict[str, Any]] = []
        for c in cells(ctx.store):
            row: dict[str, Any] = {"cell": c.cell, "condition": c.condition, "seed": c.seed, "method": c.method}
            if c.cell in logged:
                eps = sorted(logged[c.cell], key=lambda p: int(p["episode"]))
                scores = [float(p["score"]) for p in eps]
                row.update(source="episodes", episodes=[
                    {"episode": int(p["episode"]), "score": float(p["score"]), "won": bool(p["won"]),
                     "steps": int(p["steps"]), "refinements": int(p["refinements"]), "reverted": len(p["reverted"]),
                     "rejected": int(p["rejected"]), "stuck_pct": int(p["stuck"]["pct"])} for p in eps],
                    windows=[{"clock": int(w["clock"]), "pct": int(w["pct"]), "steps": int(w["steps"])}
                             for p in eps for w in p["windows"]],
                    refinements=sum(int(p["refinements"]) for p in eps),
                    reverted=sum(len(p["reverted"]) for p in eps),
                    test=_test_refinements([a.answer for a in episode_attempts(ctx.store, c.cell, "test")]))
            else:
                scores, _ = practice_curve(ctx.store, c.cell)
                row.update(source="practice attempts", episodes=[], windows=[], refinements=None, reverted=None,
                           test=None)
            row.update(**curve(scores), won=sum(s >= 1.0 for s in scores))
            rows.append(row)
        return {"cells": rows, "conditions": condition_means(rows)}
