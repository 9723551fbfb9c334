"""Every method's change manifests scored on the next attempt of the tasks they name (results.json `views.changes`).

A *change* is a harness version with a parent. Its `Manifest` names tasks it should fix (`expected_fixes`) or may
break (`expected_regressions`). Nothing is asked of a model: the run's own practice attempts are the truth.

* **Groups.** A task's attempts in one unit under one harness — the same version id and the same solver prompt (the
  prompt of the attempt's call; an attempt without a known call joins the task's last group of that unit and
  version) — are one outcome, AHE's rule over k rollouts (`task_outcomes`): pass iff every rollout passed
  (`attempts.passed`, the benchmark's own verdict), exception iff every one was a provider error (such a group is
  skipped: no attempt), else fail. The prompt splits the trials of one step whose harness was edited in between
  (a reflection added, a resource rewritten) though the protocol records them under the step's starting version.
* **Before / after.** For a change v made in unit U: before(t) is t's first group in U under an ancestor of v (the
  step's harness before its edits), else t's last group under an ancestor in an earlier unit; after(t) is t's first
  group in a later unit under v or a descendant of v. A task with both is *measured*: the pair (before, after) is
  its *window*, and every change between the two attempts shares it. A named task without a window is *unmeasured*
  (counted, never scored as pass or fail). Only practice units count (phases practice and rollout).
* **Per change:** `score_round` on the change's measured tasks (its named tasks cut to the measured ones), so
  flipped, regressed and the released verdict rules (HARMFUL, MIXED, EFFECTIVE, PARTIALLY_EFFECTIVE, INEFFECTIVE)
  are `harness.change_scoring`'s; a change with no measured named task gets no verdict.
* **Pooled, per window:** each window is a round of one task; a task counts once per window however many of its
  changes named it (unique tasks, as `change_scoring` pools), so fix precision = windows named and flipped /
  windows named, recall = windows named and flipped / windows flipped (`pooled_pr`), and likewise for regressions.
  An unattributed regression is a regressed window that no change in it named, as fix or as risk.
* **Measured in step:** a change whose expected fix t was seen to improve inside the unit that made it (a later
  group of t in that unit scored more than t's first one: GEPA's and Autogenesis's minibatch after > before,
  Reflexion's passing retrial, SkillProx's re-executed batch) restated a measurement rather than predicted. Its
  figures are kept apart (`in_step`) from the other changes' (`predicted`); both are scored on later units only.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evoarena.harness.change_scoring import (
    ChangeVerdict,
    Outcome,
    PredictionPR,
    Rollout,
    pooled_pr,
    score_round,
    task_outcomes,
)
from evoarena.harness.changes import from_version_manifest
from evoarena.harness.versions import Manifest
from evoarena.store import RunStore
from evoarena.store.queries import CellRow, PracticeAttempt, cells, practice_attempts, unit_keys
from evoarena.store.versions import VersionRow, cell_versions

POOLS = ("predicted", "in_step")


@dataclass(frozen=True)
class Group:
    """One task's attempts in one unit under one harness, as one outcome."""

    unit: int
    version: str
    prompt: str | None
    outcome: Outcome
    score: float  # the mean score, a provider error counting 0


@dataclass(frozen=True)
class Change:
    """A version with a parent: the unit that made it and the tasks its manifest names."""

    version: str
    unit: int
    fixes: tuple[str, ...]
    risks: tuple[str, ...]

    @property
    def named(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.fixes, *self.risks)))


@dataclass(frozen=True)
class Window:
    """Two consecutive measured outcomes of a task and the changes made between them."""

    task: str
    before: Outcome
    after: Outcome
    changes: tuple[str, ...]


@dataclass(frozen=True)
class ChangeResult:
    """One change scored on its measured tasks."""

    change: Change
    measured: Mapping[str, tuple[Outcome, Outcome]]
    unmeasured: tuple[str, ...]  # named tasks without a window
    in_step: tuple[str, ...]  # expected fixes seen improving in the unit that made the change
    verdict: ChangeVerdict | None  # None: no named task was measured
    flipped: tuple[str, ...]
    regressed: tuple[str, ...]

    @property
    def pool(self) -> str:
        return "in_step" if self.in_step else "predicted"


@dataclass(frozen=True)
class CellChanges:
    """A cell's changes and windows."""

    changes: tuple[ChangeResult, ...]
    windows: tuple[Window, ...]


def _task_ids(value: object) -> tuple[str, ...]:
    items = value if isinstance(value, list) else []
    return tuple(dict.fromkeys(t for t in items if isinstance(t, str) and t.strip()))


def _rollout(a: PracticeAttempt) -> Rollout:
    if a.passed is not None:
        return a.passed
    return None if a.error is not None or a.score is None else a.score


def task_groups(attempts: Iterable[PracticeAttempt], units: Mapping[str, int]) -> dict[str, list[Group]]:
    """Per task its groups, in unit order then attempt order (attempts of units not in `units` are left out)."""
    acc: dict[str, dict[tuple[int, str, str | None], list[PracticeAttempt]]] = {}
    for a in attempts:
        unit = units.get(a.unit_key)
        if unit is None:
            continue
        by_key = acc.setdefault(a.task_id, {})
        key: tuple[int, str, str | None] = (unit, a.version_id, a.prompt_hash)
        if a.prompt_hash is None:
            key = next((k for k in reversed(by_key) if k[:2] == (unit, a.version_id)), key)
        by_key.setdefault(key, []).append(a)
    out: dict[str, list[Group]] = {}
    for task, by_key in acc.items():
        ordered = sorted(by_key.items(), key=lambda kv: (kv[0][0], kv[1][0].id))
        out[task] = [Group(unit=k[0], version=k[1], prompt=k[2],
                           outcome=task_outcomes({task: [_rollout(a) for a in rows]}, len(rows))[task],
                           score=sum(a.score or 0.0 for a in rows) / len(rows)) for k, rows in ordered]
    return out


def _closure(start: str, edges: Mapping[str, Sequence[str]]) -> frozenset[str]:
    seen = {start}
    stack = [start]
    while stack:
        for nxt in edges.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return frozenset(seen)


def _edges(versions: Sequence[VersionRow]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(parents, children) of each version."""
    parents = {v.id: [str(p) for p in v.parent_ids] for v in versions}
    children: dict[str, list[str]] = {}
    for v in versions:
        for p in parents[v.id]:
            children.setdefault(p, []).append(v.id)
    return parents, children


def changes_of(versions: Sequence[VersionRow], units: Mapping[str, int]) -> list[Change]:
    """The versions with a parent whose step is a finished unit, with the tasks their manifests name."""
    return [Change(version=v.id, unit=units[v.step], fixes=_task_ids(v.manifest.get("expected_fixes")),
                   risks=_task_ids(v.manifest.get("expected_regressions")))
            for v in versions if v.parent_ids and v.step in units]


@dataclass(frozen=True)
class Lineage:
    """A change's ancestors, and the change with its descendants."""

    ancestors: frozenset[str]
    descendants: frozenset[str]  # the version itself included

    @classmethod
    def of(cls, version: str, parents: Mapping[str, Sequence[str]], children: Mapping[str, Sequence[str]]) -> Lineage:
        return cls(_closure(version, parents) - {version}, _closure(version, children))


def window_of(change: Change, lineage: Lineage, groups: Sequence[Group],
              units: Sequence[int]) -> tuple[int, int] | None:
    """(before, after) indices into one task's `groups` (whose units are `units`) for `change`; None when the task is
    not measured. Groups that are all provider errors are passed over."""
    lo, hi = bisect_left(units, change.unit), bisect_right(units, change.unit)

    def usable(i: int, versions: frozenset[str]) -> bool:
        return groups[i].outcome != "exception" and groups[i].version in versions

    before = next((i for i in range(lo, hi) if usable(i, lineage.ancestors)), None)
    if before is None:
        before = next((i for i in range(lo - 1, -1, -1) if usable(i, lineage.ancestors)), None)
    if before is None:
        return None
    after = next((i for i in range(hi, len(groups)) if usable(i, lineage.descendants)), None)
    return None if after is None else (before, after)


def seen_in_step(change: Change, groups: Sequence[Group]) -> bool:
    """Whether a later group of the task in the unit that made `change` scored more than the task's first one."""
    here = [g for g in groups if g.unit == change.unit]
    return any(g.score > here[0].score for g in here[1:])


def score_cell(versions: Sequence[VersionRow], attempts: Iterable[PracticeAttempt],
               units: Sequence[str]) -> CellChanges:
    """Score every change of one cell (its versions, practice attempts and unit keys in the order written)."""
    index = {key: i for i, key in enumerate(units)}
    groups = task_groups(attempts, index)
    group_units = {task: [g.unit for g in gs] for task, gs in groups.items()}
    parents, children = _edges(versions)
    windows: dict[tuple[str, int, int], list[str]] = {}
    outcomes: dict[tuple[str, int, int], tuple[Outcome, Outcome]] = {}
    results: list[ChangeResult] = []
    for change in changes_of(versions, index):
        lineage = Lineage.of(change.version, parents, children)
        measured: dict[str, tuple[Outcome, Outcome]] = {}
        for task, gs in groups.items():
            found = window_of(change, lineage, gs, group_units[task])
            if found is None:
                continue
            b, a = gs[found[0]].outcome, gs[found[1]].outcome
            measured[task] = (b, a)
            windows.setdefault((task, *found), []).append(change.version)
            outcomes[(task, *found)] = (b, a)
        in_step = tuple(t for t in change.fixes if t in groups and seen_in_step(change, groups[t]))
        fixes = [t for t in change.fixes if t in measured]
        risks = [t for t in change.risks if t in measured]
        score = score_round(
            from_version_manifest(Manifest(expected_fixes=fixes, expected_regressions=risks), change_id=change.version),
            {t: o[0] for t, o in measured.items()}, {t: o[1] for t, o in measured.items()})
        results.append(ChangeResult(
            change=change, measured=measured, unmeasured=tuple(t for t in change.named if t not in measured),
            in_step=in_step, verdict=score.changes[0].verdict if fixes or risks else None,
            flipped=score.flipped, regressed=score.regressed))
    return CellChanges(tuple(results), tuple(Window(k[0], *outcomes[k], tuple(v)) for k, v in windows.items()))


def _window_round(w: Window, named: Iterable[ChangeResult]) -> tuple[PredictionPR, PredictionPR, int]:
    """(fix P/R, regression P/R, unattributed regressions) of one window as a round of one task, for `named`."""
    named = list(named)
    fix = any(w.task in r.change.fixes for r in named)
    risk = any(w.task in r.change.risks for r in named)
    score = score_round(from_version_manifest(Manifest(expected_fixes=[w.task] if fix else [],
                                                       expected_regressions=[w.task] if risk else [])),
                        {w.task: w.before}, {w.task: w.after})
    return score.fix, score.regression, len(score.unattributed_regressions)


def _pr(prs: Sequence[PredictionPR]) -> dict[str, Any]:
    precision, recall = pooled_pr(prs)
    return {"precision": precision, "recall": recall, "hits": sum(len(p.hits) for p in prs),
            "predicted": sum(len(p.predicted) for p in prs), "actual": sum(len(p.actual) for p in prs)}


def summarise(scored: Sequence[CellChanges]) -> dict[str, Any]:
    """The figures of one condition (its cells pooled): counts, unattributed regressions and, per pool of changes
    (`predicted`, `in_step`), the verdicts and pooled fix / regression precision and recall."""
    results = [r for cell in scored for r in cell.changes]
    out: dict[str, Any] = {
        "changes": len(results), "predicting": sum(bool(r.change.named) for r in results),
        "predictions": sum(len(r.change.named) for r in results),
        "unmeasured": sum(len(r.unmeasured) for r in results),
        "measured_in_step": sum(bool(r.in_step) for r in results),
        "windows": 0, "flipped": 0, "regressed": 0, "unattributed_regressions": 0,
    }
    prs: dict[str, tuple[list[PredictionPR], list[PredictionPR]]] = {p: ([], []) for p in POOLS}
    for cell in scored:
        by_id = {r.change.version: r for r in cell.changes}
        for w in cell.windows:
            inside = [by_id[v] for v in w.changes]
            out["windows"] += 1
            out["flipped"] += (w.before, w.after) == ("fail", "pass")
            out["regressed"] += (w.before, w.after) == ("pass", "fail")
            out["unattributed_regressions"] += _window_round(w, inside)[2]
            for pool in POOLS:
                members = [r for r in inside if r.pool == pool]
                if members:
                    fix, regression, _ = _window_round(w, members)
                    prs[pool][0].append(fix)
                    prs[pool][1].append(regression)
    for pool in POOLS:
        members = [r for r in results if r.pool == pool]
        verdicts = Counter(r.verdict.value for r in members if r.verdict is not None)
        out[pool] = {"changes": len(members), "scored": sum(verdicts.values()),
                     "verdicts": {v.value: verdicts[v.value] for v in ChangeVerdict if verdicts[v.value]},
                     "fix": _pr(prs[pool][0]), "regression": _pr(prs[pool][1])}
    return out


def change_report(store: RunStore, order: Sequence[str] = (), skip_methods: Iterable[str] = (),
                  run_cells: Sequence[CellRow] | None = None) -> dict[str, Any] | None:
    """`views.changes`: per condition (in `order`, then by name) the figures of `summarise`; None when no cell of a
    method outside `skip_methods` holds a manifest that names a task. `run_cells`: the cells, when already read."""
    skip = set(skip_methods)
    by_condition: dict[str, tuple[str, list[CellChanges]]] = {}
    named = False
    for c in cells(store) if run_cells is None else run_cells:
        if c.method in skip:
            continue
        cell = score_cell(cell_versions(store, c.cell), practice_attempts(store, c.cell), unit_keys(store, c.cell))
        if not cell.changes:
            continue
        named = named or any(r.change.named for r in cell.changes)
        by_condition.setdefault(c.condition, (c.method, []))[1].append(cell)
    if not named:
        return None
    rank = {name: i for i, name in enumerate(order)}
    rows = []
    for condition in sorted(by_condition, key=lambda n: (rank.get(n, len(rank)), n)):
        method, scored = by_condition[condition]
        rows.append({"condition": condition, "method": method, "cells": len(scored), **summarise(scored)})
    return {"conditions": rows}
