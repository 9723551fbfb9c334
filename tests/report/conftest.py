"""Fixtures for the report tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_samples import make_budgets, make_calls, make_meta, make_scores

from evoarena.protocol.run.runner import run_experiment
from evoarena.report import CallRecord, CellBudget, RunMeta, ScoreRecord
from evoarena.spec import load_spec

RECIPES = Path(__file__).resolve().parents[2] / "recipes"


@pytest.fixture
def sample() -> tuple[RunMeta, list[ScoreRecord], list[CallRecord], list[CellBudget]]:
    return make_meta(), make_scores(), make_calls(), make_budgets()


@pytest.fixture(scope="module")
def arith_basics(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished scripted run of the arith-basics recipe (three conditions, one seed), without role probes."""
    root = tmp_path_factory.mktemp("report-store")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVOARENA_CACHE_DIR", str(root / "cache"))
        run_experiment(load_spec(RECIPES / "arith-basics.yaml").with_model("scripted"), root / "run", probe=False)
    return root / "run"
