"""The episodes view (results.json `views.episodes`, its report.html section), registered as `episodes`: for a run on
an interactive benchmark, every cell's practice episodes one by one — score, won, steps by kind, meta-actions by name,
harness calls by type and tokens per role — with the seeds' AUC (Σ episode scores / (K × max score); the grader's
scores are already normalised) and the late mean (last 30 %) per cell and per condition. Any method's cells: the
learning curve of static, EvoTest, JitRL, BPE or Continual Harness arms side by side."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from evoarena.api import REGISTRY, InteractiveBenchmark, view
from evoarena.api.views import ReportContext, RunInfo, TemplateView
from evoarena.envs.curves import condition_means
from evoarena.envs.episode import META
from evoarena.envs.metrics import auc, late_mean
from evoarena.store.queries import cells, episode_attempts, tokens_by_unit


def episode_row(score: float | None, passed: bool | None, error: str | None, answer: str | None,
                tokens: dict[str, int]) -> dict[str, Any]:
    """One practice episode read from its outcome JSON: steps by kind, meta-actions by name, calls by type."""
    row: dict[str, Any] = {"score": score, "won": bool(passed), "error": error, "tokens": dict(tokens),
                           "steps": None, "kinds": {}, "meta": {}, "calls": {}}
    try:
        out = json.loads(answer) if answer else None
    except json.JSONDecodeError:
        out = None
    if not isinstance(out, dict):
        return row
    trace = out.get("trace") or []
    kinds, meta, calls = Counter[str](), Counter[str](), Counter[str]()
    for s in trace:
        kinds[str(s.get("kind", "env"))] += 1
        if s.get("kind") == "meta":
            m = META.match(str(s.get("action", "")))
            meta[m.group(1) if m else "?"] += 1
        calls.update({str(k): int(v) for k, v in (s.get("calls") or {}).items()})
    row.update(steps=int(out.get("steps", len(trace))), kinds=dict(kinds), meta=dict(meta), calls=dict(calls))
    return row


@view("episodes")
class EpisodesView(TemplateView):
    """Per-episode learning curves of every arm on an interactive benchmark, with AUC, late mean and costs."""

    template = ("evoarena.benchmarks", "episodes_view.html.j2")

    def applies(self, run: RunInfo) -> bool:
        try:
            cls = REGISTRY.get("benchmark", run.benchmark)
        except Exception:  # noqa: BLE001 - a benchmark this process cannot load has no episodes to show
            return False
        return isinstance(cls, type) and issubclass(cls, InteractiveBenchmark)

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        rows: list[dict[str, Any]] = []
        for c in cells(ctx.store):
            tokens = tokens_by_unit(ctx.store, c.cell)
            episodes = [episode_row(e.score, e.passed, e.error, e.answer, tokens.get(e.unit_key, {}))
                        for e in episode_attempts(ctx.store, c.cell, "practice")]
            scores = [float(e["score"]) for e in episodes if e["score"] is not None]
            steps = [e["steps"] for e in episodes if e["steps"] is not None]
            calls: Counter[str] = Counter()
            for e in episodes:
                calls.update(e["calls"])
            rows.append({"cell": c.cell, "condition": c.condition, "seed": c.seed, "method": c.method,
                         "episodes": episodes, "scores": scores, "auc": auc(scores, 1.0) if scores else None,
                         "late_mean": late_mean(scores) if scores else None, "won": sum(e["won"] for e in episodes),
                         "mean_steps": sum(steps) / len(steps) if steps else None,
                         "calls_per_episode": {k: v / len(episodes) for k, v in sorted(calls.items())}
                         if episodes else {}})
        if not any(r["episodes"] for r in rows):
            return None
        return {"cells": rows, "conditions": condition_means(rows)}
