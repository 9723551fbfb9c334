"""The archive's result matrix: every attempt of a cell as one (candidate version, phase, task, rollout) cell with
its score and what its solver call cost — what lineage searches select on and what `evoarena versions --json`
shows per node."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evoarena.store.db import RunStore


@dataclass(frozen=True)
class MatrixEntry:
    """One attempt: the version it ran with, its phase, task, rollout index among that version's attempts of the
    task in the phase (0, 1, … in the order recorded), score (None: ungraded, e.g. a provider error) and the tokens
    of the solver call that produced it (0 when it made none: a cache hit is still counted, as the ledger does)."""

    version_id: str
    phase: str
    task_id: str
    rollout: int
    score: float | None
    error: str | None
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class VersionCost:
    """A version's evaluations (graded attempts) and the solver tokens spent on all its attempts."""

    evaluations: int
    attempts: int
    input_tokens: int
    output_tokens: int


def result_matrix(store: RunStore, cell: str) -> list[MatrixEntry]:
    """Every attempt of `cell` in the order recorded, with its rollout index and its call's tokens."""
    rows = store.query(
        "SELECT a.version_id, a.phase, a.task_id, a.score, a.error, COALESCE(c.input_tokens, 0) AS input_tokens, "
        "COALESCE(c.output_tokens, 0) AS output_tokens FROM attempts a LEFT JOIN calls c ON c.id = a.call_id "
        "WHERE a.cell = ? ORDER BY a.id", [cell])
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for r in rows:
        key = (str(r["version_id"]), str(r["phase"]), str(r["task_id"]))
        seen[key] = seen.get(key, -1) + 1
        out.append(MatrixEntry(key[0], key[1], key[2], seen[key], None if r["score"] is None else float(r["score"]),
                               r["error"], int(r["input_tokens"]), int(r["output_tokens"])))
    return out


def version_costs(matrix: Sequence[MatrixEntry]) -> dict[str, VersionCost]:
    """Per version: evaluations, attempts and solver tokens, summed over the matrix."""
    acc: dict[str, list[int]] = {}
    for e in matrix:
        a = acc.setdefault(e.version_id, [0, 0, 0, 0])
        a[0] += e.score is not None
        a[1] += 1
        a[2] += e.input_tokens
        a[3] += e.output_tokens
    return {v: VersionCost(*a) for v, a in acc.items()}


def task_scores(matrix: Sequence[MatrixEntry], version_id: str) -> dict[str, dict[str, list[float | None]]]:
    """One version's scores by phase, then task, rollouts in order (None: ungraded)."""
    out: dict[str, dict[str, list[float | None]]] = {}
    for e in matrix:
        if e.version_id == version_id:
            out.setdefault(e.phase, {}).setdefault(e.task_id, []).append(e.score)
    return out
