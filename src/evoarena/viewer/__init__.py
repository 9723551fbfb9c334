"""`evoarena view`: a local web app over run stores, read-only — runs, conditions, lineage, tasks, traces, ledger and
curves — that refreshes while a run writes."""

from evoarena.viewer.app import create_app
from evoarena.viewer.catalog import RunCatalog, UnknownRun, find_runs

__all__ = ["RunCatalog", "UnknownRun", "create_app", "find_runs"]
