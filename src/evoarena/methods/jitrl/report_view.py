"""JitRL's report view (results.json `views.jitrl`, its report.html section), registered as `jitrl`: the learning
curve of the practice episodes of every cell of the run — a JitRL cell's episodes as its practice steps logged them,
any other cell's submitted practice attempts in order (the static or EvoTest arm) — with the AUC (Σ episode scores /
(K × max score), scores already normalised), the late mean (last 30 % of episodes), and for JitRL the step memory's
size and the replies that fell back (uniform prior, admissible options), per cell and per condition."""

from __future__ import annotations

from typing import Any

from evoarena.api import view
from evoarena.api.views import ReportContext, TemplateView
from evoarena.envs.curves import condition_means, curve, episode_events, practice_curve
from evoarena.store.queries import cells


@view("jitrl")
class JitRLView(TemplateView):
    """JitRL: per-episode scores, AUC, late mean and memory size of the practice episodes, next to the other arms'."""

    method = "jitrl"
    template = ("evoarena.methods.jitrl", "report_view.html.j2")

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        episodes = episode_events(ctx.store, "jitrl_episode")
        if not episodes:
            return None
        rows: list[dict[str, Any]] = []
        for c in cells(ctx.store):
            if c.cell in episodes:
                eps = episodes[c.cell]
                scores = [float(p["score"]) for p in eps]
                extra: dict[str, Any] = {
                    "source": "episodes", "won": sum(bool(p["won"]) for p in eps),
                    "memory": max((int(p.get("memory", 0)) for p in eps), default=0),
                    "prior_fallbacks": sum(int(p.get("prior_fallbacks", 0)) for p in eps),
                    "proposal_fallbacks": sum(int(p.get("proposal_fallbacks", 0)) for p in eps)}
            else:
                scores, won = practice_curve(ctx.store, c.cell)
                extra = {"source": "practice attempts", "won": won, "memory": None, "prior_fallbacks": None,
                         "proposal_fallbacks": None}
            rows.append({"cell": c.cell, "condition": c.condition, "seed": c.seed, "method": c.method,
                         **curve(scores), **extra})
        return {"cells": rows, "conditions": condition_means(rows)}
