"""Transfer: each finished cell's selected harness graded by another model on the run's own locked test split.

The run's benchmark is built again from its stored spec and its test split must hash as it did (`runs.test_hash`);
every role the condition's solver side uses is played by the other model. Each cell's grading is one unit
(`transfer/<model>`, phase "transfer") committed with its attempts, so a second call reads it back, and its calls go
through the response cache. The test split stays locked: only the Evaluator opens it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evoarena.codec import from_plain, to_plain
from evoarena.models import ResponseCache
from evoarena.protocol import catalog
from evoarena.protocol.run.evaluate import mean_score
from evoarena.protocol.run.regrade import reopen
from evoarena.spec import ExperimentSpec, ModelSpec, SpecError
from evoarena.store import RunStore, queries

TRANSFER_PHASE = "transfer"


@dataclass(frozen=True)
class TransferResult:
    """One cell's selected version graded by `model` on the test split: what its `transfer/<model>` unit keeps."""

    model: str
    version: str
    mean: float


@dataclass(frozen=True)
class TransferCell:
    """What `run_transfer` did for one cell: its result, and whether it was read back rather than graded now."""

    cell: str
    condition: str
    evolved_on: str
    seed: int
    result: TransferResult
    reused: bool


def unit_key(model: str) -> str:
    return f"{TRANSFER_PHASE}/{model}"


def transfer_model(spec: ExperimentSpec, name: str) -> tuple[str, ModelSpec]:
    """The model `name` means for a run of `spec`: one of its `models`, else a `--model` shorthand as `evoarena run`
    takes it (`embedded`, `embedded-small`, `gemma`, a `.gguf`, `scripted`); a one-line SpecError otherwise."""
    if name in spec.models:
        return name, spec.models[name]
    mapped = spec.with_model(name)
    key = next(iter(mapped.roles.values()), name)
    return key, mapped.models[key]


def run_transfer(run_dir: Path, model: str, *, search: tuple[Path, ...] = (),
                 cache: ResponseCache | None = None) -> list[TransferCell]:
    """Grade every finished cell's selected version with `model` on the run's test split (cells graded before are
    read back; cells whose solver already was `model` are left out: the run's own test is that grading). An unknown
    model, or a run whose test split no longer hashes as it did, is refused before any call."""
    spec = queries.run(RunStore(run_dir))
    if spec is None:
        raise SpecError(f"{run_dir}: no run here")
    key, mspec = transfer_model(ExperimentSpec.model_validate_json(spec.spec_json), model)
    run = reopen(run_dir, search=search, cache=cache)
    backend = catalog.backend_of(run.spec.model_copy(update={"models": {**run.spec.models, key: mspec}}), key, search)
    out: list[TransferCell] = []
    for c in run.finished_cells():
        assert c.selected_version is not None  # a finished cell has one
        if c.model == key:  # its own test score is that cell of the matrix already
            continue
        ukey = unit_key(key)
        stored = run.store.unit_result(c.cell, ukey)
        if stored is not None:
            out.append(TransferCell(c.cell, c.condition, c.model, c.seed, from_plain(TransferResult, stored), True))
            continue
        rows = run.grade(c, c.selected_version, phase=TRANSFER_PHASE, unit=ukey, play={"*": (key, backend, mspec)})
        result = TransferResult(model=key, version=c.selected_version, mean=mean_score(rows))
        run.store.finish_unit(c.cell, ukey, to_plain(result), rows)
        out.append(TransferCell(c.cell, c.condition, c.model, c.seed, result, False))
    return out
