"""Read-only queries of the viewer's curves page (and the report's learning curves): a cell's score per practice
step, its checkpoints' val scores, and the ledger's tokens per role in call order, all aggregated in SQL so a big run
is not loaded whole."""

from __future__ import annotations

from dataclasses import dataclass

from evoarena.store.db import RunStore


@dataclass(frozen=True)
class StepScore:
    """One practice step of a cell (a practice unit: a step of an evolving method, or an episode of an interactive
    benchmark) — its attempts (practice and rollouts), how many were graded, and their mean score."""

    unit_key: str
    attempts: int
    graded: int
    mean: float | None


def practice_steps(store: RunStore) -> dict[str, list[StepScore]]:
    """{cell: its practice steps in the order they were recorded (by their first attempt)}, in one query for the whole
    run; provider errors are left out of the mean, as in the report."""
    rows = store.query(
        "SELECT cell, unit_key, COUNT(*) AS n, SUM(score IS NOT NULL AND error IS NULL) AS g,"
        " AVG(CASE WHEN error IS NULL THEN score END) AS m, MIN(id) AS first FROM attempts"
        " WHERE phase IN ('practice', 'rollout') GROUP BY cell, unit_key ORDER BY cell, first")
    out: dict[str, list[StepScore]] = {}
    for r in rows:
        out.setdefault(str(r["cell"]), []).append(StepScore(str(r["unit_key"]), int(r["n"]), int(r["g"] or 0),
                                                            None if r["m"] is None else float(r["m"])))
    return out


@dataclass(frozen=True)
class CheckpointVal:
    """A checkpoint's val grading: the step that recorded the version ("init" for the initial harness), the version,
    and the mean score of its graded select attempts (provider errors left out) and how many."""

    step: str
    version: str
    mean: float
    n: int


def checkpoint_vals(store: RunStore) -> dict[str, list[CheckpointVal]]:
    """{cell: the val score of each of its versions graded in the select phase, in the order they were made}, in one
    query for the whole run."""
    rows = store.query(
        "SELECT a.cell AS cell, v.step AS step, a.version_id AS version, AVG(a.score) AS m, COUNT(*) AS n"
        " FROM attempts a JOIN harness_versions v ON v.cell = a.cell AND v.id = a.version_id"
        " WHERE a.phase='select' AND a.error IS NULL AND a.score IS NOT NULL"
        " GROUP BY a.cell, a.version_id ORDER BY a.cell, MIN(v.created_at), MIN(v.rowid)")
    out: dict[str, list[CheckpointVal]] = {}
    for r in rows:
        out.setdefault(str(r["cell"]), []).append(CheckpointVal(str(r["step"]), str(r["version"]), float(r["m"]),
                                                                int(r["n"])))
    return out


@dataclass(frozen=True)
class TokenBucket:
    """The tokens one role spent in a run of consecutive ledger rows ending at call id `last_call`."""

    role: str
    last_call: int
    calls: int
    input_tokens: int
    output_tokens: int


def token_buckets(store: RunStore, buckets: int = 200) -> list[TokenBucket]:
    """The ledger cut into at most `buckets` equal ranges of call ids, per role: a tokens-over-time curve of a
    100k-call run in one aggregate query."""
    span = store.query_one("SELECT MIN(id) AS lo, MAX(id) AS hi FROM calls") or {}
    if span.get("lo") is None:
        return []
    lo, hi = int(span["lo"]), int(span["hi"])
    width = max(1, -(-(hi - lo + 1) // max(1, buckets)))  # ceil
    rows = store.query(
        "SELECT role, (id - ?) / ? AS b, MAX(id) AS last, COUNT(*) AS n, SUM(input_tokens) AS i,"
        " SUM(output_tokens) AS o FROM calls GROUP BY role, b ORDER BY role, b",
        [lo, width],
    )
    return [TokenBucket(str(r["role"]), int(r["last"]), int(r["n"]), int(r["i"] or 0), int(r["o"] or 0))
            for r in rows]


def first_practice_answer(store: RunStore) -> str | None:
    """The answer of the run's first practice attempt (an interactive benchmark's holds the episode's trace)."""
    row = store.query_one("SELECT answer FROM attempts WHERE phase='practice' ORDER BY id LIMIT 1")
    return None if row is None or row["answer"] is None else str(row["answer"])
