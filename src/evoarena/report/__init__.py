"""Reports: per-task scores and ledger rows -> results.json and a self-contained report.html.

The records and the view hooks load with the package; the statistics, plots and templates (numpy, scipy, matplotlib,
jinja2) on first use, so the view contract (`evoarena.api.views`) costs no heavy import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .hooks import ReportContext, ReportView, RunInfo, ViewPage
from .records import CallRecord, CellBudget, RunMeta, ScoreRecord

if TYPE_CHECKING:
    from .html import render_html, write_report
    from .results import build_results
    from .stats import bootstrap_ci

_LAZY = {"render_html": "html", "write_report": "html", "build_results": "results", "bootstrap_ci": "stats"}

__all__ = [
    "CallRecord",
    "CellBudget",
    "ReportContext",
    "ReportView",
    "RunInfo",
    "RunMeta",
    "ScoreRecord",
    "ViewPage",
    "bootstrap_ci",
    "build_results",
    "render_html",
    "write_report",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'evoarena.report' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"evoarena.report.{_LAZY[name]}"), name)
    globals()[name] = value
    return value
