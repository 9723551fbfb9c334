"""EvoTest's report view (results.json `views.evotest`, its report.html section), registered as `evotest`: the
learning curve of the practice episodes of every cell of the run — an EvoTest cell's episodes as its state recorded
them (one per configuration played), any other cell's submitted practice attempts in order (the static arm's
episodes) — with the seeds' AUC (Σ episode scores / (K × max score), scores already normalised) and the late mean
(the last 30 % of episodes), per cell and per condition (mean over seeds); for an EvoTest cell also the failure rate
of its evolver (the seed's extractor failure rate): the share of episodes in whose step an evolver reply or a part of
it was rejected (unparsable, cut off, nothing new to keep, a refused part), and the share in which a state extractor
was (it failed the compile check or its smoke run)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evoarena.api import view
from evoarena.api.views import ReportContext, TemplateView
from evoarena.envs.curves import condition_means, curve, episode_events, practice_curve
from evoarena.store.queries import cells


def failure_rates(episodes: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """The share of episodes whose step rejected any evolver output, and the share that rejected a state extractor
    (None without episodes)."""
    if not episodes:
        return {"failure_rate": None, "extractor_failure_rate": None}
    parts = [list(e.get("rejected") or []) for e in episodes]
    return {"failure_rate": sum(bool(p) for p in parts) / len(parts),
            "extractor_failure_rate": sum("extract_state" in p for p in parts) / len(parts)}


@view("evotest")
class EvoTestView(TemplateView):
    """EvoTest: per-episode scores, AUC and late mean of the practice episodes, next to the other arms'."""

    method = "evotest"
    template = ("evoarena.methods.evotest", "report_view.html.j2")

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        episodes = episode_events(ctx.store, "evotest_episode")
        rows: list[dict[str, Any]] = []
        for c in cells(ctx.store):
            if c.cell in episodes:
                eps = sorted(episodes[c.cell], key=lambda p: int(p["episode"]))
                scores = [float(p["score"]) for p in eps]
                extra = {"source": "episodes", "won": sum(bool(p["won"]) for p in eps),
                         "nodes": max(int(p.get("nodes", 0)) for p in eps),
                         "exploited": sum(p.get("action") == "exploit" for p in eps), **failure_rates(eps)}
            else:
                scores, won = practice_curve(ctx.store, c.cell)
                extra = {"source": "practice attempts", "won": won, "nodes": None, "exploited": None,
                         "failure_rate": None, "extractor_failure_rate": None}
            rows.append({"cell": c.cell, "condition": c.condition, "seed": c.seed, "method": c.method,
                         **curve(scores), **extra})
        if not episodes:
            return None
        return {"cells": rows, "conditions": condition_means(rows)}

