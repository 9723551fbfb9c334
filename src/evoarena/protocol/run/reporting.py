"""Rebuild a run's report with every registered report view and the registry's method classes.

The report itself names no benchmark or method; this is where the protocol hands it the catalog's views (built-ins
and plugins) and the resolver views use to read a method's state (`Method.state_view`).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable

from evoarena.api import Entry
from evoarena.api.views import ReportView
from evoarena.protocol.catalog import catalog, method_class
from evoarena.report import collect
from evoarena.report.results_record import RunResults
from evoarena.store import RunStore


def report_views(entries: Iterable[Entry]) -> dict[str, ReportView]:
    """The registered views by name, in registry (name) order; a registered class is instantiated."""
    out: dict[str, ReportView] = {}
    for e in entries:
        obj = e.obj() if inspect.isclass(e.obj) else e.obj
        if not isinstance(obj, ReportView):
            raise TypeError(f"view {e.name!r} ({e.origin}) is no ReportView: it needs applies, build and html")
        out[e.name] = obj
    return out


def rebuild_report(store: RunStore) -> RunResults:
    """Recompute results.json and report.html from the store, with every registered view; return the run record."""
    return collect.rebuild_report(store, report_views(catalog().entries("view")), method_class)
