"""Reports: per-task scores and ledger rows -> results.json and a self-contained report.html."""

from .html import render_html, write_report
from .records import CallRecord, CellBudget, RunMeta, ScoreRecord
from .results import build_results
from .stats import bootstrap_ci

__all__ = [
    "CallRecord",
    "CellBudget",
    "RunMeta",
    "ScoreRecord",
    "bootstrap_ci",
    "build_results",
    "render_html",
    "write_report",
]
