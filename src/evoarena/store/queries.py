"""Named read-only queries of a run store for reports and their views, each returning typed records.

Report code reads the store only through these, so a change of the schema is met here and nowhere else.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from evoarena.store.calls import CallRow
from evoarena.store.db import RunStore
from evoarena.store.selection import Selection, read_selection


@dataclass(frozen=True)
class RunRow:
    """The run (table `runs`); `spec_json` is the spec as the runner stored it."""

    id: str
    name: str
    spec_json: str
    spec_hash: str
    code_version: str
    evidence: str
    test_hash: str | None
    isolation: str | None
    status: str
    started_at: str
    finished_at: str | None

    @property
    def spec(self) -> dict[str, Any] | None:
        """The parsed spec; None when it is not readable JSON."""
        try:
            spec = json.loads(self.spec_json)
        except (TypeError, ValueError):
            return None
        return spec if isinstance(spec, dict) else None


@dataclass(frozen=True)
class CellRow:
    """One cell (table `cells`): a condition x model x seed, its status and versions."""

    cell: str
    condition: str
    method: str
    model: str
    seed: int
    status: str
    current_version: str | None
    selected_version: str | None
    budget_json: str | None
    selection_json: str | None = None  # why the selected version was kept (store/selection.py)

    @property
    def budget(self) -> dict[str, Any] | None:
        """The budget meter the cell stored at its end (`limits`, `used`); None before it finished."""
        return json.loads(self.budget_json) if self.budget_json else None

    @property
    def selection(self) -> Selection | None:
        """Why the cell kept its selected version; None without a selection (a curriculum, an unfinished cell)."""
        return read_selection(self.selection_json)


@dataclass(frozen=True)
class AttemptScore:
    """A graded attempt: its phase, task, score, the grader's verdict and a provider error (if any)."""

    phase: str
    task_id: str
    score: float | None
    passed: bool | None
    error: str | None


@dataclass(frozen=True)
class ModelGraded:
    """A test task graded by another model than the cell's (phase transfer): the cell, that model, the score."""

    cell: str
    model: str
    task_id: str
    score: float | None
    error: str | None


@dataclass(frozen=True)
class PracticeAttempt:
    """A graded attempt of a practice unit (phase practice or rollout) with the harness version it is recorded under
    and the hash of the solver prompt of its call (None when the call is unknown, e.g. a provider error)."""

    id: int
    unit_key: str
    task_id: str
    version_id: str
    score: float | None
    passed: bool | None
    error: str | None
    prompt_hash: str | None


@dataclass(frozen=True)
class EpisodeAttempt:
    """An attempt with its answer (an interactive task's outcome and trace) and its task's source id."""

    phase: str
    unit_key: str
    task_id: str
    source_id: str | None
    version_id: str
    answer: str | None
    score: float | None
    passed: bool | None
    error: str | None


@dataclass(frozen=True)
class TestedVersion:
    """The harness version a test attempt was graded with, and the unit it ran in."""

    cell: str
    unit_key: str
    version_id: str


@dataclass(frozen=True)
class UnitRow:
    """A finished unit of a cell (table `units`) with its parsed result."""

    cell: str
    key: str
    result: dict[str, Any]


@dataclass(frozen=True)
class EventRow:
    """One event (table `events`) with its parsed payload; `unit` is the unit key it happened in, if any."""

    id: int
    cell: str | None
    kind: str
    payload: dict[str, Any]
    unit: str | None


def run(store: RunStore) -> RunRow | None:
    """The store's run, or None when it holds none."""
    r = store.run()
    if r is None:
        return None
    return RunRow(
        id=r["id"], name=r["name"], spec_json=r["spec_json"], spec_hash=r["spec_hash"],
        code_version=r["code_version"], evidence=r["evidence"], test_hash=r["test_hash"], isolation=r["isolation"],
        status=r["status"], started_at=r["started_at"], finished_at=r["finished_at"],
    )  # fmt: skip


def cells(store: RunStore) -> list[CellRow]:
    """Every cell, by cell id."""
    return [
        CellRow(
            cell=c["cell"], condition=c["condition"], method=c["method"], model=c["model"], seed=int(c["seed"]),
            status=c["status"], current_version=c["current_version"], selected_version=c["selected_version"],
            budget_json=c["budget_json"], selection_json=c["selection_json"],
        )  # fmt: skip
        for c in store.cells()
    ]


def attempt_scores(store: RunStore, cell: str, version_id: str | None) -> list[AttemptScore]:
    """With a version: that version's test and select attempts in the cell; without: every test attempt of the cell
    (a curriculum cell grades a version per stage). By task id."""
    if version_id:
        rows = store.query(
            "SELECT phase, task_id, score, passed, error FROM attempts WHERE cell=? AND version_id=?"
            " AND phase IN ('test', 'select') ORDER BY task_id",
            [cell, version_id],
        )
    else:
        rows = store.query(
            "SELECT phase, task_id, score, passed, error FROM attempts WHERE cell=? AND phase='test' ORDER BY task_id",
            [cell],
        )
    return [
        AttemptScore(phase=r["phase"], task_id=r["task_id"], score=None if r["score"] is None else float(r["score"]),
                     passed=None if r["passed"] is None else bool(r["passed"]), error=r["error"])
        for r in rows
    ]


def graded_after(store: RunStore) -> set[str]:
    """Which gradings asked for after the run the store holds: "transfer" (`evoarena transfer`), "curve"
    (`evoarena curve`); one query, so a run without them costs the report no more."""
    rows = store.query("SELECT DISTINCT phase FROM attempts WHERE phase IN ('transfer', 'curve')")
    return {str(r["phase"]) for r in rows}


def transfer_scores(store: RunStore) -> list[ModelGraded]:
    """Every transfer attempt (a cell's selected version graded by another model), in the order recorded; the model
    is the one its unit (`transfer/<model>`) names."""
    rows = store.query("SELECT cell, unit_key, task_id, score, error FROM attempts WHERE phase='transfer' ORDER BY id")
    return [ModelGraded(cell=r["cell"], model=str(r["unit_key"]).partition("/")[2], task_id=r["task_id"],
                        score=None if r["score"] is None else float(r["score"]), error=r["error"]) for r in rows]


def version_results(store: RunStore, cell: str, phases: Sequence[str] | None = None
                    ) -> dict[str, dict[str, list[float]]]:
    """Every graded attempt of a cell by the harness version it ran with, then by phase (practice, rollout, select,
    test), in the order they were recorded: the per-node scores of the cell's lineage tree. `phases`: only those
    (the (cell, phase) index then skips the rest, e.g. a big test split)."""
    if phases is not None and not phases:
        return {}
    only = f" AND phase IN ({', '.join('?' for _ in phases)})" if phases else ""
    rows = store.query(f"SELECT version_id, phase, score FROM attempts WHERE cell=?{only} AND score IS NOT NULL"
                       " ORDER BY id", [cell, *(phases or ())])
    out: dict[str, dict[str, list[float]]] = {}
    for r in rows:
        out.setdefault(str(r["version_id"]), {}).setdefault(str(r["phase"]), []).append(float(r["score"]))
    return out


def practice_attempts(store: RunStore, cell: str) -> list[PracticeAttempt]:
    """Every practice and rollout attempt of a cell, in the order recorded, with its call's prompt hash."""
    rows = store.query(
        "SELECT a.id, a.unit_key, a.task_id, a.version_id, a.score, a.passed, a.error, c.prompt_hash"
        " FROM attempts a LEFT JOIN calls c ON c.id = a.call_id"
        " WHERE a.cell=? AND a.phase IN ('practice', 'rollout') ORDER BY a.id",
        [cell],
    )
    return [
        PracticeAttempt(id=int(r["id"]), unit_key=r["unit_key"], task_id=r["task_id"], version_id=r["version_id"],
                        score=None if r["score"] is None else float(r["score"]),
                        passed=None if r["passed"] is None else bool(r["passed"]), error=r["error"],
                        prompt_hash=r["prompt_hash"])
        for r in rows
    ]


def submitted_practice(store: RunStore, cell: str) -> list[AttemptScore]:
    """A cell's submitted practice attempts (phase practice, not rollouts), in the order recorded: on an interactive
    benchmark, its practice episodes one by one (a learning curve)."""
    rows = store.query("SELECT phase, task_id, score, passed, error FROM attempts WHERE cell=? AND phase='practice'"
                       " ORDER BY id", [cell])
    return [
        AttemptScore(phase=r["phase"], task_id=r["task_id"], score=None if r["score"] is None else float(r["score"]),
                     passed=None if r["passed"] is None else bool(r["passed"]), error=r["error"])
        for r in rows
    ]


def episode_attempts(store: RunStore, cell: str, phase: str) -> list[EpisodeAttempt]:
    """A cell's attempts of one phase with their answers and their tasks' source ids, in the order recorded (on an
    interactive benchmark: its episodes with their step-by-step traces)."""
    rows = store.query(
        "SELECT a.phase, a.unit_key, a.task_id, t.source_id, a.version_id, a.answer, a.score, a.passed, a.error"
        " FROM attempts a LEFT JOIN tasks t ON t.task_id = a.task_id WHERE a.cell=? AND a.phase=? ORDER BY a.id",
        [cell, phase],
    )
    return [
        EpisodeAttempt(phase=r["phase"], unit_key=r["unit_key"], task_id=r["task_id"], source_id=r["source_id"],
                       version_id=r["version_id"],
                       answer=r["answer"], score=None if r["score"] is None else float(r["score"]),
                       passed=None if r["passed"] is None else bool(r["passed"]), error=r["error"])
        for r in rows
    ]


def phase_attempt_ids(store: RunStore, cell: str, phase: str) -> list[int]:
    """A cell's attempt row ids of one phase, in the order recorded (its episodes 1, 2, … on an interactive
    benchmark)."""
    return [int(r["id"]) for r in store.query("SELECT id FROM attempts WHERE cell=? AND phase=? ORDER BY id",
                                              [cell, phase])]


def tokens_by_unit(store: RunStore, cell: str) -> dict[str, dict[str, int]]:
    """A cell's ledger tokens (input + output) per unit key, then per role."""
    rows = store.query("SELECT unit, role, SUM(input_tokens + output_tokens) AS n FROM calls WHERE cell=? AND unit IS "
                       "NOT NULL GROUP BY unit, role", [cell])
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        out.setdefault(r["unit"], {})[r["role"]] = int(r["n"] or 0)
    return out


def tested_versions(store: RunStore) -> list[TestedVersion]:
    """Every test attempt's cell, unit key and graded version, in the order they were recorded."""
    rows = store.query("SELECT cell, unit_key, version_id FROM attempts WHERE phase='test' ORDER BY id")
    return [TestedVersion(cell=r["cell"], unit_key=r["unit_key"], version_id=r["version_id"]) for r in rows]


def calls(
    store: RunStore, *, cell: str | None = None, phase: str | None = None, errors: bool = True
) -> list[CallRow]:
    """Ledger rows in the order they were made, optionally of one cell and phase; `errors=False` leaves out
    provider errors."""
    where, args = [], []
    if cell is not None:
        where.append("cell=?")
        args.append(cell)
    if phase is not None:
        where.append("phase=?")
        args.append(phase)
    if not errors:
        where.append("error IS NULL")
    sql = "SELECT * FROM calls" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
    return [CallRow.from_db(r) for r in store.query(sql, args)]


def units(
    store: RunStore, *, key_like: str | None = None, order: Literal["written", "key"] = "written"
) -> list[UnitRow]:
    """Finished units by cell, then in the order written (or by key); `key_like` is an SQL LIKE pattern."""
    where = " WHERE key LIKE ?" if key_like is not None else ""
    by = "key" if order == "key" else "rowid"
    rows = store.query(f"SELECT cell, key, result FROM units{where} ORDER BY cell, {by}",
                       [key_like] if key_like is not None else [])
    return [UnitRow(cell=r["cell"], key=r["key"], result=json.loads(r["result"])) for r in rows]


def unit_keys(store: RunStore, cell: str) -> list[str]:
    """A cell's finished unit keys in the order they were written."""
    return [str(r["key"]) for r in store.query("SELECT key FROM units WHERE cell=? ORDER BY rowid", [cell])]


# what the runner wrote (a method's events are marked "method"; stores from before the mark have NULL)
_BY_RUNNER = " AND source IS NOT 'method'"


def events(store: RunStore, kinds: Sequence[str], *, runner_only: bool = False) -> list[EventRow]:
    """Events of the given kinds, in the order they happened; `runner_only`: none that a method logged."""
    if not kinds:
        return []
    marks = ", ".join("?" for _ in kinds)
    only = _BY_RUNNER if runner_only else ""
    rows = store.query(f"SELECT id, cell, kind, payload, unit FROM events WHERE kind IN ({marks}){only} ORDER BY id",
                       list(kinds))
    return [_event(r) for r in rows]


def last_event(store: RunStore, kind: str, *, runner_only: bool = False) -> EventRow | None:
    """The latest event of one kind (e.g. the `run_started` of the last resume), if any; `runner_only`: the latest
    the runner wrote."""
    only = _BY_RUNNER if runner_only else ""
    r = store.query_one(f"SELECT id, cell, kind, payload, unit FROM events WHERE kind=?{only} ORDER BY id DESC LIMIT 1",
                        [kind])
    return None if r is None else _event(r)


def count_events(store: RunStore, kind: str) -> int:
    """How many events of one kind the run logged."""
    r = store.query_one("SELECT COUNT(*) AS n FROM events WHERE kind=?", [kind])
    return int(r["n"]) if r else 0


def _event(r: dict[str, Any]) -> EventRow:
    return EventRow(id=int(r["id"]), cell=r["cell"], kind=r["kind"], payload=json.loads(r["payload"]), unit=r["unit"])
