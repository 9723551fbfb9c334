"""The transfer matrix: each condition's selected harnesses, evolved with the model of their cells, tested with every
model that graded them on the run's test split (the run's own test score on the diagonal)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from evoarena.store.calls import CallRow
from evoarena.store.queries import CellRow, ModelGraded

from .records import ScoreRecord
from .results import BOOTSTRAP_SEED, CI_LEVEL, N_RESAMPLES
from .results_record import TransferCell, TransferMatrix, TransferSpend
from .stats import bootstrap_ci, clean, mean

Key = tuple[str, str, str]  # condition, evolved on, tested on


def transfer_matrix(cells: Sequence[CellRow], scores: Sequence[ScoreRecord], graded: Sequence[ModelGraded],
                    calls: Sequence[CallRow]) -> TransferMatrix | None:
    """None without a transfer. The diagonal's interval is the conditions table's test interval (same scores, same
    bootstrap seed); another model's is seeded from the condition, both models and the word transfer."""
    if not graded:
        return None
    by_cell = {c.cell: c for c in cells}
    tasks: dict[Key, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    seeds: dict[Key, set[int]] = defaultdict(set)
    errors: dict[Key, int] = defaultdict(int)
    for g in graded:
        c = by_cell.get(g.cell)
        if c is None:
            continue
        key = (c.condition, c.model, g.model)
        seeds[key].add(c.seed)
        if g.error is not None or g.score is None:
            errors[key] += 1
        else:
            tasks[key][g.task_id].append(g.score)
    evolved = {(cond, model) for cond, model, _ in seeds}
    for r in scores:
        if r.split == "test" and (r.condition, r.model) in evolved:
            key = (r.condition, r.model, r.model)
            seeds[key].add(r.seed)
            if r.error:
                errors[key] += 1
            else:
                tasks[key][r.task_id].append(r.score)
    out = []
    for key in sorted(seeds):
        cond, model, tested = key
        means = [mean(v) for _, v in sorted(tasks[key].items())]
        m, low, high = bootstrap_ci(means, seed=BOOTSTRAP_SEED, n_resamples=N_RESAMPLES,
                                    level=CI_LEVEL)
        out.append(TransferCell(condition=cond, evolved_on=model, tested_on=tested, mean=clean(m), ci_low=clean(low),
                                ci_high=clean(high), n_tasks=len(means), n_seeds=len(seeds[key]),
                                n_errors=errors[key]))
    own = sorted({model for _, model in evolved})
    models = [*own, *sorted({t for _, _, t in seeds} - set(own))]
    return TransferMatrix(models=models, cells=out, spend=_spend(calls))


def _spend(calls: Sequence[CallRow]) -> list[TransferSpend]:
    by_model: dict[str, list[CallRow]] = defaultdict(list)
    for r in calls:
        by_model[r.model].append(r)
    return [TransferSpend(model=m, calls=len(rows), cached_calls=sum(bool(r.cached) for r in rows),
                          tokens=sum(r.input_tokens + r.output_tokens for r in rows),
                          cost_usd=clean(sum(r.cost_usd for r in rows)))
            for m, rows in sorted(by_model.items())]
