"""EvoTest's report view (results.json `views.evotest`, its report.html section), registered as `evotest`: the
learning curve of the practice episodes of every cell of the run — an EvoTest cell's episodes as its state recorded
them (one per configuration played), any other cell's submitted practice attempts in order (the static arm's
episodes) — with the seeds' AUC (Σ episode scores / (K × max score), scores already normalised) and the late mean
(the last 30 % of episodes), per cell and per condition (mean over seeds)."""

from __future__ import annotations

from typing import Any

from evoarena.api import view
from evoarena.api.views import ReportContext, TemplateView
from evoarena.envs.metrics import auc, late_mean
from evoarena.store.queries import cells, events, submitted_practice


@view("evotest")
class EvoTestView(TemplateView):
    """EvoTest: per-episode scores, AUC and late mean of the practice episodes, next to the other arms'."""

    method = "evotest"
    template = ("evoarena.methods.evotest", "report_view.html.j2")

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        episodes: dict[str, list[dict[str, Any]]] = {}
        for e in events(ctx.store, ["evotest_episode"]):
            if e.cell is not None:
                episodes.setdefault(e.cell, []).append(e.payload)
        rows: list[dict[str, Any]] = []
        for c in cells(ctx.store):
            if c.cell in episodes:
                eps = sorted(episodes[c.cell], key=lambda p: int(p["episode"]))
                scores = [float(p["score"]) for p in eps]
                extra = {"source": "episodes", "won": sum(bool(p["won"]) for p in eps),
                         "nodes": max(int(p.get("nodes", 0)) for p in eps),
                         "exploited": sum(p.get("action") == "exploit" for p in eps)}
            else:
                attempts = [a for a in submitted_practice(ctx.store, c.cell) if a.score is not None]
                scores = [float(a.score or 0.0) for a in attempts]
                extra = {"source": "practice attempts", "won": sum(bool(a.passed) for a in attempts), "nodes": None,
                         "exploited": None}
            rows.append({"cell": c.cell, "condition": c.condition, "seed": c.seed, "method": c.method,
                         "scores": scores, "auc": auc(scores, 1.0), "late_mean": late_mean(scores), **extra})
        if not episodes:
            return None
        by_condition: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            by_condition.setdefault(r["condition"], []).append(r)
        conditions = [{"condition": k, "cells": len(v), "auc": sum(r["auc"] for r in v) / len(v),
                       "late_mean": sum(r["late_mean"] for r in v) / len(v)} for k, v in by_condition.items()]
        return {"cells": rows, "conditions": conditions}

