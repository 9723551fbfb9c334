"""Every recipe's `--model scripted` run exercises its methods' update roles (evidence: mechanism): in each cell, no
update role (every role but the solver) that was called may have had every one of its replies rejected. A rejection
(`rejected_output`) names the role of the reply it refuses; one that refuses only a part of a reply (`part`: an
operation, a change, a tool call) leaves the rest of it adopted and is not counted; one that names no role (a run
from before rejections named it, or a program's failure) is not counted either. Runs are narrowed to stay fast: the
first seed, at most 2 epochs, few test tasks (as tests/protocol/test_results_pinned.py narrows; `NARROW` per recipe),
the first condition of each method. Recipes without a scripted model or without an update role are skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from evoarena.protocol.catalog import method_class
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import ExperimentSpec, load_spec
from evoarena.store import RunStore, queries

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
# benchmark params cut where a recipe sets them (never raised)
CUTS = {"n_test": 6, "n_val": 4, "chains": 2, "tasks": 22, "episodes": 2}
# benchmark params set per recipe where a cut alone is not enough (each TextWorld game costs ~1.5 s to generate)
NARROW = {"evotest-transfer": {"transfer": ["key-moved-door-rule"], "n_test": 1},
          "clr-methods": {"chains": 4}}  # the release's 20 chains when unset


def narrowed(path: Path) -> ExperimentSpec:
    spec = load_spec(path).with_model("scripted")
    spec = spec.with_seeds(spec.seeds[:1])
    params = {k: min(v, CUTS[k]) if k in CUTS and isinstance(v, int) else v for k, v in spec.benchmark.params.items()}
    params.update(NARROW.get(path.stem, {}))
    protocol = spec.protocol.model_copy(update={"epochs": min(spec.protocol.epochs, 2)})
    firsts = [m for i, m in enumerate(spec.methods) if m.name not in {n.name for n in spec.methods[:i]}]
    return spec.model_copy(update={"benchmark": spec.benchmark.model_copy(update={"params": params}),
                                   "protocol": protocol, "methods": firsts})


def starved_roles(store: RunStore) -> list[str]:
    """Update roles of a cell that were called and had as many whole replies rejected, as `cell/role (calls,
    rejected)`."""
    rejected: dict[tuple[str | None, str], int] = {}
    for e in queries.events(store, ["rejected_output"]):
        role = e.payload.get("role")
        if role is not None and not e.payload.get("part"):
            rejected[(e.cell, role)] = rejected.get((e.cell, role), 0) + 1
    calls: dict[tuple[str | None, str], int] = {}
    for c in queries.calls(store, errors=False):
        if c.role != "solver" and c.phase != "probe":
            calls[(c.cell, c.role)] = calls.get((c.cell, c.role), 0) + 1
    return [f"{cell}/{role} ({n} calls, {rejected.get((cell, role), 0)} rejected)"
            for (cell, role), n in calls.items() if rejected.get((cell, role), 0) >= n]


def _case(path: Path) -> object:
    spec = load_spec(path)
    marks: list[pytest.MarkDecorator] = []
    if "scripted" not in spec.models:
        marks = [pytest.mark.skip(reason="the recipe defines no scripted model")]
    elif all(set(method_class(m.name).roles) <= {"solver"} for m in spec.methods):
        marks = [pytest.mark.skip(reason="no method of the recipe has an update role")]
    return pytest.param(path, id=path.stem, marks=marks)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", [_case(p) for p in sorted(RECIPES.glob("*.yaml"))])
def test_a_recipes_scripted_run_exercises_every_update_role(path: Path, tmp_path: Path) -> None:
    run_experiment(narrowed(path), tmp_path / "run", probe=False)
    assert starved_roles(RunStore(tmp_path / "run")) == []
