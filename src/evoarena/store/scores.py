"""Per-cell score summaries straight from the attempts table, for `evoarena show`."""

from __future__ import annotations

from dataclasses import dataclass

from evoarena.store.db import RunStore


@dataclass(frozen=True)
class SplitScore:
    """Graded attempts of one split: mean score, all-or-nothing pass rate, how many were graded or errored."""

    mean: float | None
    pass_rate: float | None
    n_graded: int
    n_errors: int


@dataclass(frozen=True)
class CellScore:
    """A cell and the scores of the version it deploys (the selected one, or every stage test of a curriculum)."""

    cell: str
    condition: str
    seed: int
    status: str
    version: str | None
    test: SplitScore
    val: SplitScore


def _split(store: RunStore, cell: str, phase: str, version: str | None) -> SplitScore:
    where, args = ("cell=? AND phase=?", [cell, phase]) if version is None else \
        ("cell=? AND phase=? AND version_id=?", [cell, phase, version])
    row = store.query_one(
        f"SELECT AVG(score) AS mean, AVG(passed) AS pass_rate, SUM(error IS NULL) AS n, SUM(error IS NOT NULL) AS e"
        f" FROM attempts WHERE {where}", args)
    assert row is not None
    return SplitScore(row["mean"], row["pass_rate"], int(row["n"] or 0), int(row["e"] or 0))


def cell_scores(store: RunStore) -> list[CellScore]:
    """Every cell, by name, with its test and validation scores."""
    out = []
    for c in store.cells():
        version = c["selected_version"]
        out.append(CellScore(
            cell=c["cell"], condition=c["condition"], seed=int(c["seed"]), status=c["status"], version=version,
            test=_split(store, c["cell"], "test", version),
            val=_split(store, c["cell"], "select", version) if version else SplitScore(None, None, 0, 0),
        ))
    return out


def version_scores(store: RunStore, cell: str, version: str) -> tuple[SplitScore, SplitScore]:
    """(val, test) scores of one version of a cell: val when it was a checkpoint, test when it was the one graded."""
    return _split(store, cell, "select", version), _split(store, cell, "test", version)
