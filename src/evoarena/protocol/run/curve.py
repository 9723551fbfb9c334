"""`evoarena curve RUN`: the test scores the score-vs-spend curves need. Only a cell's selected version is graded on
test during the run; this grades every other checkpoint selection graded on val, on the same locked test split with
the cell's own models — when the user asks, never during a run — so the curves read test scores instead of val.
Each grading is one unit (`curve/<version>`, ledger phase "curve", outside every budget), read back on a second call.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evoarena.codec import from_plain, to_plain
from evoarena.models import ResponseCache
from evoarena.protocol.run.evaluate import mean_score
from evoarena.protocol.run.regrade import reopen

CURVE_PHASE = "curve"


@dataclass(frozen=True)
class CurveGrade:
    """A checkpoint's mean test score, kept by its `curve/<version>` unit."""

    version: str
    mean: float


@dataclass(frozen=True)
class CurveCell:
    """One checkpoint of one cell graded (or read back: `reused`)."""

    cell: str
    grade: CurveGrade
    reused: bool


def run_curve(run_dir: Path, *, search: tuple[Path, ...] = (), cache: ResponseCache | None = None) -> list[CurveCell]:
    """Grade on test every checkpoint graded on val that is not its cell's selected version (which the run graded)."""
    run = reopen(run_dir, search=search, cache=cache)
    out: list[CurveCell] = []
    for c in run.finished_cells():
        sel = c.selection
        if sel is None:
            continue
        for k in sel.candidates:
            if k.val is None or k.version == c.selected_version:
                continue
            unit = f"{CURVE_PHASE}/{k.version}"
            stored = run.store.unit_result(c.cell, unit)
            if stored is not None:
                out.append(CurveCell(c.cell, from_plain(CurveGrade, stored), True))
                continue
            rows = run.grade(c, k.version, phase=CURVE_PHASE, unit=unit)
            grade = CurveGrade(k.version, mean_score(rows))
            run.store.finish_unit(c.cell, unit, to_plain(grade), rows)
            out.append(CurveCell(c.cell, grade, False))
    return out
