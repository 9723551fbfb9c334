"""Learning curves for the report views of episodic methods (EvoTest, JitRL, Continual Harness, the `episodes` view):
a method's per-episode events by cell, any other arm's curve from its submitted practice attempts, the AUC and late
mean of a curve, and per condition the means over seeds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evoarena.envs.metrics import auc, late_mean
from evoarena.store import RunStore
from evoarena.store.queries import events, submitted_practice


def episode_events(store: RunStore, kind: str) -> dict[str, list[dict[str, Any]]]:
    """{cell: payloads} of one event kind, in the order logged (a method's one-event-per-episode log)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for e in events(store, [kind]):
        if e.cell is not None:
            out.setdefault(e.cell, []).append(e.payload)
    return out


def practice_curve(store: RunStore, cell: str) -> tuple[list[float], int]:
    """A cell's submitted practice scores in order (one per episode on an interactive benchmark) and how many won."""
    attempts = [a for a in submitted_practice(store, cell) if a.score is not None]
    return [float(a.score or 0.0) for a in attempts], sum(bool(a.passed) for a in attempts)


def curve(scores: Sequence[float]) -> dict[str, Any]:
    """The curve with its AUC (scores already normalised: max 1) and late mean."""
    return {"scores": list(scores), "auc": auc(scores, 1.0), "late_mean": late_mean(scores)}


def condition_means(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per condition (in first-seen order) the number of cells and the mean AUC and late mean over them; rows without
    a curve (`auc` None) are left out."""
    by: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        if r.get("auc") is not None:
            by.setdefault(str(r["condition"]), []).append(r)
    return [{"condition": k, "cells": len(v), "auc": sum(r["auc"] for r in v) / len(v),
             "late_mean": sum(r["late_mean"] for r in v) / len(v)} for k, v in by.items()]
