"""The tasks page's SQL: a phase's tasks × conditions, one page of tasks at a time (paged in SQL over the
attempts (cell, phase) index), each cell the seed-averaged score of the condition's attempts on that task."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evoarena.store.db import RunStore

PHASES = ("test", "select", "practice", "rollout")  # the order the phase select offers them in
ANSWER_CHARS = 80  # how much of an answer the table shows (the trace page has all of it)


@dataclass(frozen=True)
class CellAttempt:
    """One attempt of a grid cell: its row id, seed, score, verdict and the start of its answer."""

    id: int
    seed: int
    score: float | None
    passed: bool | None
    error: str | None
    answer: str | None  # the first ANSWER_CHARS characters (+1, to tell a cut answer)

    @property
    def answer_short(self) -> str:
        text = " ".join((self.answer or "").split())
        return text if len(text) <= ANSWER_CHARS - 1 else text[:ANSWER_CHARS - 1] + "…"


@dataclass
class GridCell:
    """A task × condition: its attempts (every seed, every version graded in the phase) and their mean score."""

    attempts: list[CellAttempt] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.attempts)

    @property
    def score(self) -> float | None:
        scores = [a.score for a in self.attempts if a.score is not None]
        return sum(scores) / len(scores) if scores else None

    @property
    def first(self) -> CellAttempt | None:
        return self.attempts[0] if self.attempts else None


@dataclass(frozen=True)
class TaskText:
    """What the store keeps of a task: its split, the prompt the benchmark wrote and, for a train task, its reference
    (None for val and test tasks, and in stores written before tasks kept their text)."""

    split: str
    prompt: str | None
    reference: str | None


def task_texts(store: RunStore, ids: Sequence[str]) -> dict[str, TaskText]:
    """{task id: its text} of the `ids` the store knows; {} in a store written before tasks kept their text."""
    cols = {str(r["name"]) for r in store.query("PRAGMA table_info(tasks)")}
    if not ids or "prompt" not in cols:
        return {}
    rows = store.query(f"SELECT task_id, split, prompt, reference FROM tasks WHERE task_id IN ({_in(ids)})",
                       list(ids))
    return {str(r["task_id"]): TaskText(str(r["split"]), r["prompt"], r["reference"]) for r in rows}


@dataclass(frozen=True)
class TaskRow:
    task_id: str
    cells: dict[str, GridCell]  # condition → its cell
    text: TaskText | None = None

    def cell(self, condition: str) -> GridCell:
        return self.cells.get(condition) or GridCell()


@dataclass(frozen=True)
class ConditionMean:
    """A condition's mean score over every attempt of the phase (all tasks, not just the page)."""

    condition: str
    score: float | None
    attempts: int
    tasks: int


@dataclass(frozen=True)
class TaskGrid:
    phase: str
    conditions: list[str]
    rows: list[TaskRow]
    total: int  # tasks matching (every page)
    page: int
    per_page: int
    means: list[ConditionMean]

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))


def cell_conditions(store: RunStore) -> dict[str, tuple[str, int]]:
    """Each cell's (condition, seed)."""
    return {str(r["cell"]): (str(r["condition"]), int(r["seed"]))
            for r in store.query("SELECT cell, condition, seed FROM cells ORDER BY cell")}


def conditions(store: RunStore, order: Sequence[str] = ()) -> list[str]:
    """The run's conditions: those of `order` (the spec's) first, in that order, then any other, by name."""
    have = {c for c, _ in cell_conditions(store).values()}
    return [c for c in order if c in have] + sorted(have - set(order))


def phases(store: RunStore) -> list[str]:
    """The phases the store has attempts of (one index probe per cell and phase)."""
    cells = list(cell_conditions(store))
    out = []
    for phase in PHASES:
        if any(store.query_one("SELECT 1 AS x FROM attempts WHERE cell=? AND phase=? LIMIT 1", [c, phase])
               for c in cells):
            out.append(phase)
    return out


def _in(cells: Sequence[str]) -> str:
    return ",".join("?" * len(cells)) or "NULL"


def _condition_case(cells: dict[str, tuple[str, int]]) -> tuple[str, list[Any]]:
    """An SQL expression of a.cell's condition (no join: the cells are few), with its parameters."""
    if not cells:
        return "NULL", []
    args: list[Any] = []
    whens = []
    for cell, (condition, _) in cells.items():
        whens.append("WHEN ? THEN ?")
        args += [cell, condition]
    return f"CASE a.cell {' '.join(whens)} END", args


def _task_ids(store: RunStore, cells: dict[str, tuple[str, int]], phase: str, disagree: bool,
              limit: int, offset: int) -> tuple[list[str], int]:
    """One page of the phase's task ids (by id) and how many there are; `disagree`: only tasks on which the
    conditions' mean scores differ (conditions with no score on the task left out)."""
    names = list(cells)
    if not disagree:
        base = f"SELECT DISTINCT task_id FROM attempts a WHERE a.cell IN ({_in(names)}) AND a.phase=?"
        args: list[Any] = [*names, phase]
    else:
        case, case_args = _condition_case(cells)
        base = (f"SELECT task_id FROM (SELECT a.task_id, {case} AS condition, AVG(a.score) AS s FROM attempts a"
                f" WHERE a.cell IN ({_in(names)}) AND a.phase=? GROUP BY a.task_id, condition)"
                " GROUP BY task_id HAVING MAX(s) - MIN(s) > 1e-9")
        args = [*case_args, *names, phase]
    total = store.query_one(f"SELECT COUNT(*) AS n FROM ({base})", args)
    ids = store.query(f"{base} ORDER BY task_id LIMIT ? OFFSET ?", [*args, limit, offset])
    return [str(r["task_id"]) for r in ids], int(total["n"]) if total else 0


def _means(store: RunStore, cells: dict[str, tuple[str, int]], phase: str) -> dict[str, ConditionMean]:
    case, case_args = _condition_case(cells)
    rows = store.query(
        f"SELECT {case} AS condition, AVG(a.score) AS s, COUNT(*) AS n, COUNT(DISTINCT a.task_id) AS tasks"
        f" FROM attempts a WHERE a.cell IN ({_in(list(cells))}) AND a.phase=? GROUP BY condition",
        [*case_args, *cells, phase])
    return {str(r["condition"]): ConditionMean(str(r["condition"]), None if r["s"] is None else float(r["s"]),
                                               int(r["n"]), int(r["tasks"])) for r in rows}


def task_grid(store: RunStore, *, phase: str = "test", page: int = 1, per_page: int = 50, disagree: bool = False,
              order: Sequence[str] = ()) -> TaskGrid:
    """Page `page` (from 1) of the phase's tasks × conditions; `order`: the spec's conditions (column order)."""
    cells = cell_conditions(store)
    conds = conditions(store, order)
    page = max(1, page)
    ids, total = _task_ids(store, cells, phase, disagree, per_page, (page - 1) * per_page)
    rows = {t: TaskRow(t, {}) for t in ids}
    if ids:
        found = store.query(
            f"SELECT a.id, a.cell, a.task_id, a.score, a.passed, a.error, substr(a.answer, 1, {ANSWER_CHARS + 1})"
            f" AS answer FROM attempts a WHERE a.cell IN ({_in(list(cells))}) AND a.phase=?"
            f" AND a.task_id IN ({_in(ids)}) ORDER BY a.id", [*cells, phase, *ids])
        for r in found:
            condition, seed = cells[str(r["cell"])]
            rows[str(r["task_id"])].cells.setdefault(condition, GridCell()).attempts.append(CellAttempt(
                int(r["id"]), seed, None if r["score"] is None else float(r["score"]),
                None if r["passed"] is None else bool(r["passed"]), r["error"], r["answer"]))
    means = _means(store, cells, phase)
    texts = task_texts(store, ids)
    rows = {t: replace(r, text=texts.get(t)) for t, r in rows.items()}
    return TaskGrid(phase, conds, [rows[t] for t in ids], total, page, per_page,
                    [means.get(c) or ConditionMean(c, None, 0, 0) for c in conds])
