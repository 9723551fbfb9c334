"""The hooks a report calls for the sections of benchmarks and methods: ReportView, what it may read (ReportContext)
and the page helpers it draws with (ViewPage). The report names no benchmark or method; views are passed in.

Public as `evoarena.api.views` (with the TemplateView base); defined here, below the api, so the report needs no
import upward.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from evoarena.harness import load_tree
from evoarena.store import RunStore, queries
from evoarena.store.queries import CellRow

from .records import RunMeta
from .results_record import ConditionResult


class StateReader(Protocol):
    """A method class as views read it: its own reading of a harness tree (`Method.state_view`)."""

    def state_view(self, tree: Mapping[str, str]) -> dict[str, Any]: ...


def no_methods(name: str) -> StateReader:
    """The resolver of a report built without one: every method is unknown."""
    raise LookupError(f"method {name!r}: this report was built without a method resolver")


@dataclass(frozen=True)
class RunInfo:
    """What decides whether a view applies: the spec's name, its benchmark, the methods its cells ran, the evidence."""

    name: str
    benchmark: str
    methods: frozenset[str]
    evidence: str


@dataclass
class ReportContext:
    """What a view may read: the run store (read-only, through `evoarena.store.queries`), the run and its meta, the
    conditions of results.json, the spec as stored, the run's cells (read once per report) and a method's own
    reading of a harness version.

    `resolve_method` maps a method name to its registered class; the protocol passes the registry's, so a view
    never imports a method to read the method's state."""

    store: RunStore
    run: RunInfo
    meta: RunMeta
    conditions: Sequence[ConditionResult]
    spec: Mapping[str, Any] | None
    cells: Sequence[CellRow] | None = None  # None: not read yet (run_cells reads them)
    resolve_method: Callable[[str], StateReader] = no_methods
    _trees: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)
    _states: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict, repr=False)

    @property
    def evidence(self) -> str:
        return self.run.evidence

    @property
    def spec_methods(self) -> list[Mapping[str, Any]]:
        """The spec's method entries (name, label, params, roles), in spec order; [] without a readable spec."""
        return list((self.spec or {}).get("methods", []))

    def run_cells(self) -> Sequence[CellRow]:
        """The run's cells, by cell name: those the report read, else read from the store once."""
        if self.cells is None:
            self.cells = queries.cells(self.store)
        return self.cells

    def tree(self, version_id: str) -> dict[str, str]:
        """The harness tree of a version (path -> text), loaded once per report."""
        if version_id not in self._trees:
            self._trees[version_id] = load_tree(self.store, version_id)
        return self._trees[version_id]

    def method_state(self, method_name: str, version_id: str) -> dict[str, Any]:
        """`state_view` of the registered method `method_name` on that version's harness tree (cached)."""
        key = (method_name, version_id)
        if key not in self._states:
            self._states[key] = self.resolve_method(method_name).state_view(self.tree(version_id))
        return self._states[key]


class ViewPage(Protocol):
    """What the report hands a view to draw its section: the evidence label and a template renderer whose
    environment has the report's filters (pct, num, tok, usd, signed, label, plain) and autoescaping."""

    evidence: str
    evidence_caption: str  # the label every table and plot carries
    banner_class: str  # "mechanism" or "lm": the caption's css class

    def render(self, source: str, **context: Any) -> str:
        """Render template text with `banner_class`, `evidence_caption` and `r` (the results) in its context."""
        ...


@runtime_checkable
class ReportView(Protocol):
    """A section of results.json (`views.<name>`) and report.html. `build` returns None (or {}) when there is
    nothing to show; `html` draws from that data alone, so a page can be redrawn from results.json."""

    def applies(self, run: RunInfo) -> bool: ...

    def build(self, ctx: ReportContext) -> dict[str, Any] | None: ...

    def html(self, data: Mapping[str, Any], page: ViewPage) -> str: ...
