"""Report views: hooks that add a benchmark's or a method's section to results.json (`views.<name>`) and report.html.

A view registers with `@view(name)`. The report asks each registered view whether it `applies` to the run, calls
`build` with a ReportContext (what a view may read) and puts the returned data at `results["views"][name]`; `html`
renders that data alone into the view's section of report.html, so `evoarena report` can redraw the page from
results.json. Nothing here imports the report: the report passes its page helpers in (ViewPage).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, ClassVar, Protocol, runtime_checkable

from evoarena.api.method_base import Method
from evoarena.harness import load_tree
from evoarena.store import RunStore


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
    conditions of results.json, the spec as stored, and a method's own reading of a harness version.

    `resolve_method` maps a method name to its registered class; the protocol passes the registry's, so a view
    never imports a method to read the method's state."""

    store: RunStore
    run: RunInfo
    meta: Mapping[str, Any]
    conditions: Sequence[Mapping[str, Any]]
    spec: Mapping[str, Any] | None
    resolve_method: Callable[[str], type[Method]]
    _trees: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)
    _states: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict, repr=False)

    @property
    def evidence(self) -> str:
        return self.run.evidence

    @property
    def spec_methods(self) -> list[Mapping[str, Any]]:
        """The spec's method entries (name, label, params, roles), in spec order; [] without a readable spec."""
        return list((self.spec or {}).get("methods", []))

    def tree(self, version_id: str) -> dict[str, str]:
        """The harness tree of a version (path -> text), loaded once per report."""
        if version_id not in self._trees:
            self._trees[version_id] = load_tree(self.store, version_id)
        return self._trees[version_id]

    def method_state(self, method_name: str, version_id: str) -> dict[str, Any]:
        """`Method.state_view` of the registered method `method_name` on that version's harness tree (cached)."""
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
    """A section of results.json and report.html. `build` returns None (or {}) when there is nothing to show."""

    def applies(self, run: RunInfo) -> bool: ...

    def build(self, ctx: ReportContext) -> dict[str, Any] | None: ...

    def html(self, data: Mapping[str, Any], page: ViewPage) -> str: ...


class TemplateView:
    """A ReportView base: it applies when the run's benchmark is `benchmark` or some cell ran `method`, and draws its
    section from the Jinja template `template` = (package, file name), with the view's data as `v`."""

    benchmark: ClassVar[str | None] = None
    method: ClassVar[str | None] = None
    template: ClassVar[tuple[str, str]]

    def applies(self, run: RunInfo) -> bool:
        return (self.benchmark is not None and run.benchmark == self.benchmark) or (
            self.method is not None and self.method in run.methods
        )

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        raise NotImplementedError

    def html(self, data: Mapping[str, Any], page: ViewPage) -> str:
        package, name = self.template
        return page.render(resources.files(package).joinpath(name).read_text(encoding="utf-8"), v=data)
