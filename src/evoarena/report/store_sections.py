"""The parts of report.html drawn from the store rather than results.json (results.json stays as it is): each cell's
selected harness and its diff to the cell's initial version, a task × condition table of test scores (capped), and
the learning curves. Computed by collect.rebuild_report and passed to render_html."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from evoarena.harness.versions import diff_trees, load_tree
from evoarena.store import RunStore
from evoarena.store.queries import CellRow
from evoarena.store.versions import cell_versions

from .diff_view import diff_lines
from .learning_curves import ConditionCurve, practice_curves, practice_svg, step_word
from .order import spec_rank
from .records import ScoreRecord

MAX_TASKS = 200  # rows of the per-task table; the rest is counted in a note
MAX_DIFF_LINES = 400  # per cell
MAX_FILE_CHARS = 20_000  # per file of a selected harness shown


@dataclass(frozen=True)
class HarnessFile:
    path: str
    text: str
    truncated: bool


@dataclass(frozen=True)
class HarnessDiff:
    """A cell's selected harness version, its files, and the diff from the cell's initial version to it."""

    cell: str
    condition: str
    model: str
    seed: int
    initial: str | None
    selected: str | None
    files: list[HarnessFile]
    diff: list[tuple[str, str]]  # (css class: add / del / hunk / file / "", line)
    diff_lines: int  # all the diff's lines (more than `diff` holds when capped)

    @property
    def changed(self) -> bool:
        return self.diff_lines > 0


@dataclass(frozen=True)
class TaskTable:
    """Test score per task (rows) and condition (columns; "condition · model" when the run has several models):
    the mean over seeds of the graded attempts, None where not graded, "error" where only provider errors."""

    columns: list[str]
    rows: list[tuple[str, list[float | str | None]]]
    total: int  # tasks in the run's test scores (rows holds at most MAX_TASKS)


@dataclass(frozen=True)
class ReportExtras:
    harness: list[HarnessDiff]
    tasks: TaskTable
    curves: list[ConditionCurve]
    curves_svg: Markup
    step_word: str


def harness_diffs(store: RunStore, cells: Sequence[CellRow], order: Sequence[str] = ()) -> list[HarnessDiff]:
    """Per cell (spec order, then seed): its selected version (the last tested, for a cell without a selection)
    against its first version."""
    rank = spec_rank(order)
    out = []
    for c in sorted(cells, key=lambda c: (rank(c.condition), c.condition, c.model, c.seed)):
        versions = cell_versions(store, c.cell)
        initial = versions[0].id if versions else None
        selected = c.selected_version or c.current_version
        files: list[HarnessFile] = []
        lines: list[tuple[str, str]] = []
        if selected is not None:
            try:
                tree = load_tree(store, selected)
            except KeyError:
                tree = {}
            files = [HarnessFile(p, t[:MAX_FILE_CHARS], len(t) > MAX_FILE_CHARS) for p, t in sorted(tree.items())]
            if initial is not None and initial != selected:
                lines = diff_lines(diff_trees(load_tree(store, initial), tree, initial[:12], selected[:12]))
        out.append(HarnessDiff(c.cell, c.condition, c.model, c.seed, initial, selected, files,
                               lines[:MAX_DIFF_LINES], len(lines)))
    return out


def task_table(scores: Sequence[ScoreRecord], order: Sequence[str] = (), limit: int = MAX_TASKS) -> TaskTable:
    """The test split's scores as a task × condition table, tasks by id, the first `limit` of them."""
    tests = [r for r in scores if r.split == "test"]
    several_models = len({r.model for r in tests}) > 1
    rank = spec_rank(order)
    keys = sorted({(r.condition, r.model) for r in tests}, key=lambda k: (rank(k[0]), k))
    names = [f"{c} · {m}" if several_models else c for c, m in keys]
    graded: dict[tuple[str, tuple[str, str]], list[float]] = defaultdict(list)
    seen: set[tuple[str, tuple[str, str]]] = set()
    for r in tests:
        seen.add((r.task_id, (r.condition, r.model)))
        if not r.error:
            graded[(r.task_id, (r.condition, r.model))].append(r.score)
    tasks = sorted({r.task_id for r in tests})
    rows: list[tuple[str, list[float | str | None]]] = []
    for t in tasks[:limit]:
        cells: list[float | str | None] = []
        for k in keys:
            vals = graded.get((t, k))
            cells.append(sum(vals) / len(vals) if vals else ("error" if (t, k) in seen else None))
        rows.append((t, cells))
    return TaskTable(names, rows, len(tasks))


def report_extras(store: RunStore, cells: Sequence[CellRow], scores: Sequence[ScoreRecord], order: Sequence[str] = ()
                  ) -> ReportExtras:
    """The store-drawn sections of report.html, from the run's `cells` and test `scores` already read."""
    curves = practice_curves(store, order, cells)
    word = step_word(store)
    return ReportExtras(harness_diffs(store, cells, order), task_table(scores, order), curves,
                        practice_svg(curves, word, "learning-curves"), word)
