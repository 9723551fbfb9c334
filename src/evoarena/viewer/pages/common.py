"""What every page needs: its run's read-only store from the request, and the run's header data."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request

from evoarena.spec import ExperimentSpec
from evoarena.store import RunStore, queries
from evoarena.store.queries import RunRow
from evoarena.viewer.catalog import RunCatalog


def catalog(request: Request) -> RunCatalog:
    out: RunCatalog = request.app.state.catalog
    return out


def run_store(request: Request) -> tuple[str, RunStore]:
    """The `{run}` of the path and its store (UnknownRun: a 404)."""
    run_id = str(request.path_params["run"])
    return run_id, catalog(request).store(run_id)


@dataclass(frozen=True)
class RunHeader:
    id: str
    row: RunRow | None
    spec: dict[str, Any]

    @property
    def name(self) -> str:
        return self.row.name if self.row else self.id

    @cached_property
    def conditions(self) -> list[str]:
        """The spec's conditions in spec order; [] when the stored spec is no ExperimentSpec."""
        try:
            return [m.condition for m in ExperimentSpec.model_validate(self.spec).methods]
        except ValidationError:
            return []


def header(run_id: str, store: RunStore) -> RunHeader:
    row = queries.run(store)
    return RunHeader(run_id, row, (row.spec if row else None) or {})


def wall_time(started: str | None, finished: str | None, last_write: str | None = None) -> str:
    """"1 h 02 min" from the run's start to its end (or to its last write while it runs)."""
    end = finished or last_write
    if not started or not end:
        return "-"
    try:
        seconds = int((datetime.fromisoformat(end) - datetime.fromisoformat(started)).total_seconds())
    except (ValueError, TypeError):  # unreadable, or one time with a zone and one without
        return "-"
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
