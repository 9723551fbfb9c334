"""Report views: hooks that add a benchmark's or a method's section to results.json (`views.<name>`) and report.html.

A view registers with `@view(name)`. The report asks each registered view whether it `applies` to the run, calls
`build` with a ReportContext (what a view may read) and puts the returned data at `results["views"][name]`; `html`
renders that data alone into the view's section of report.html, so `evoarena report` can redraw the page from
results.json. The contract types live with the report that calls them (`evoarena.report.hooks`); TemplateView is
the usual base.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Any, ClassVar

from evoarena.report.hooks import ReportContext, ReportView, RunInfo, StateReader, ViewPage
from evoarena.report.results_record import ConditionResult

__all__ = ["ConditionResult", "ReportContext", "ReportView", "RunInfo", "StateReader", "TemplateView", "ViewPage"]


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
        raise NotImplementedError(f"{type(self).__name__}.build")

    def html(self, data: Mapping[str, Any], page: ViewPage) -> str:
        package, name = self.template
        return page.render(resources.files(package).joinpath(name).read_text(encoding="utf-8"), v=data)
