"""Fixtures for the report tests."""

from __future__ import annotations

import pytest
from report_samples import make_budgets, make_calls, make_meta, make_scores

from evoarena.report import CallRecord, CellBudget, RunMeta, ScoreRecord


@pytest.fixture
def sample() -> tuple[RunMeta, list[ScoreRecord], list[CallRecord], list[CellBudget]]:
    return make_meta(), make_scores(), make_calls(), make_budgets()
