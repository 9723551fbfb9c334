"""The report's `bpe` section: the study's metrics per cell and per condition — test success per task family
(`envs.metrics.success_by_family`, the family from the task's source id, e.g. `tw-household/heat-…`), steps per
episode by kind and meta-actions per episode by name (from the test episodes' traces), the solver's tokens per test
episode, the consolidator's calls, and the bank's pollution rate: over practice (the method's evidence ledger) and
over the test episodes (the same rules applied to their traces against the bank under test). The `frozen` arm (ReAct)
and any other arm are read the same way from their traces."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evoarena.api import view
from evoarena.api.views import ReportContext, TemplateView
from evoarena.envs.metrics import success_by_family
from evoarena.methods.bpe.evidence import episode_record, pollution, update_evidence
from evoarena.methods.bpe.experience import Bank
from evoarena.methods.bpe.goal import family
from evoarena.store.queries import EpisodeAttempt, calls, cells, episode_attempts

META = ("track", "commit", "recall", "note")


@view("bpe")
class BPEView(TemplateView):
    """BPE: success per family, harness calls per episode by type, steps, tokens and pollution, per arm."""

    method = "bpe"
    template = ("evoarena.methods.bpe", "report_view.html.j2")

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        rows = [r for c in cells(ctx.store) if (r := self._cell(ctx, c)) is not None]
        if not rows:
            return None
        by_condition: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            by_condition.setdefault(r["condition"], []).append(r)
        families = sorted({f for r in rows for f in r["families"]})
        return {"cells": rows, "conditions": [_condition(k, v) for k, v in by_condition.items()],
                "families": families, "meta": list(META)}

    @staticmethod
    def _cell(ctx: ReportContext, c: Any) -> dict[str, Any] | None:
        tests = [a for a in episode_attempts(ctx.store, c.cell, "test") if a.error is None]
        if not tests:
            return None
        practice = [a for a in episode_attempts(ctx.store, c.cell, "practice") if a.error is None]
        records = [(a, episode_record(a.answer, won=bool(a.passed))) for a in tests]
        row: dict[str, Any] = {"cell": c.cell, "condition": c.condition, "method": c.method, "seed": c.seed,
                               "episodes": len(tests), **_episodes(records)}
        row["practice_won"] = sum(bool(a.passed) for a in practice)
        row["practice_episodes"] = len(practice)
        solver = [k for k in calls(ctx.store, cell=c.cell, phase="test", errors=False) if k.role == "solver"]
        row["solver_tokens"] = sum(k.input_tokens + k.output_tokens for k in solver) / len(tests)
        row["solver_calls"] = len(solver) / len(tests)
        consolidator = [k for k in calls(ctx.store, cell=c.cell, phase="practice", errors=False)
                        if k.role == "consolidator"]
        row["consolidator_calls"] = len(consolidator)
        row["consolidator_tokens"] = sum(k.input_tokens + k.output_tokens for k in consolidator)
        row["pollution_practice"] = row["pollution_test"] = None
        version = c.selected_version or c.current_version
        if c.method == "bpe" and version:
            state = ctx.method_state("bpe", version)
            row["pollution_practice"] = state.get("pollution")
            bank = Bank.from_tree(ctx.tree(version))
            if len(bank):
                evidence: dict[str, dict[str, int]] = {}
                for _, rec in records:
                    if rec is not None:
                        update_evidence(evidence, bank.entries(), rec)
                row["pollution_test"] = pollution(bank.entries(), evidence)
        return row


def _episodes(records: Sequence[tuple[EpisodeAttempt, dict[str, Any] | None]]) -> dict[str, Any]:
    """Success per family, steps by kind and meta-actions by name per episode, of a cell's test episodes."""
    outcomes, steps, kinds, meta = [], 0, {"env": 0, "meta": 0}, dict.fromkeys(META, 0)
    for attempt, rec in records:
        fam = family(attempt.source_id or "")
        if rec is not None and rec.get("task_type") and fam in ("tw-household", ""):
            fam = str(rec["task_type"])
        outcomes.append((fam, bool(attempt.passed)))
        if rec is not None:
            steps += rec["steps"]
            for k, v in rec["kinds"].items():
                kinds[k] = kinds.get(k, 0) + v
            for k, v in rec["meta"].items():
                meta[k] = meta.get(k, 0) + v
    n = len(records)
    return {"won": sum(w for _, w in outcomes), "success": sum(w for _, w in outcomes) / n,
            "families": dict(success_by_family(outcomes)), "family_counts": _counts(outcomes),
            "steps": steps / n, "kinds": {k: v / n for k, v in kinds.items()},
            "meta_per_episode": {k: v / n for k, v in meta.items()}}


def _counts(outcomes: Sequence[tuple[str, bool]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for fam, won in outcomes:
        t = out.setdefault(fam, [0, 0])
        t[0] += won
        t[1] += 1
    return out


def _condition(name: str, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A condition over its cells: episodes pooled for success (overall and per family), means for the rest."""
    counts: dict[str, list[int]] = {}
    for r in rows:
        for fam, (won, n) in r["family_counts"].items():
            t = counts.setdefault(fam, [0, 0])
            t[0] += won
            t[1] += n
    episodes = sum(r["episodes"] for r in rows)

    def mean(key: str) -> float:
        return sum(r[key] * r["episodes"] for r in rows) / episodes

    rates = [r["pollution_practice"]["rate"] for r in rows
             if r["pollution_practice"] and r["pollution_practice"].get("rate") is not None]
    test_rates = [r["pollution_test"]["rate"] for r in rows
                  if r["pollution_test"] and r["pollution_test"].get("rate") is not None]
    return {"condition": name, "cells": len(rows), "episodes": episodes,
            "success": sum(r["won"] for r in rows) / episodes,
            "families": {f: w / n for f, (w, n) in sorted(counts.items())},
            "family_counts": {f: list(v) for f, v in sorted(counts.items())},
            "steps": mean("steps"), "solver_tokens": mean("solver_tokens"),
            "env_steps": sum(r["kinds"].get("env", 0) * r["episodes"] for r in rows) / episodes,
            "meta_per_episode": {k: sum(r["meta_per_episode"].get(k, 0) * r["episodes"] for r in rows) / episodes
                                 for k in META},
            "consolidator_calls": sum(r["consolidator_calls"] for r in rows) / len(rows),
            "pollution_practice": sum(rates) / len(rates) if rates else None,
            "pollution_test": sum(test_rates) / len(test_rates) if test_rates else None}
