"""The change-manifest view (results.json `views.changes`, its report.html section), registered as `changes`: every
method's manifests scored on the next attempt of the tasks they name (`evoarena.report.change_report`).

It is a view of all methods, registered here with them. AHE cells are left out: AHE scores its own manifests each
round on its k rollouts (the `ahe` view), and those rollouts run on component-tree candidates, a lineage apart from
the step versions that carry its manifest, so the next-attempt rule would find every AHE prediction unmeasured.
"""

from __future__ import annotations

from typing import Any, ClassVar

from evoarena.api import view
from evoarena.api.views import ReportContext, RunInfo, TemplateView
from evoarena.report.change_report import change_report


@view("changes")
class ChangesView(TemplateView):
    """Change manifests: per condition the verdicts and fix / regression precision and recall on the next attempt."""

    own_scoring: ClassVar[frozenset[str]] = frozenset({"ahe"})
    template = ("evoarena.report", "templates/changes.html.j2")

    def applies(self, run: RunInfo) -> bool:
        return bool(run.methods - self.own_scoring)

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        return change_report(ctx.store, [c.condition for c in ctx.conditions], self.own_scoring, ctx.run_cells())
