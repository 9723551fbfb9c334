"""CLR-Bench's report view (results.json `views.clr`, its report.html section), registered as `clr`.

Light on import: the views and their plots load when a CLR run is reported.
"""

from __future__ import annotations

from typing import Any

from evoarena.api import view
from evoarena.api.views import ReportContext, TemplateView


@view("clr")
class ClrView(TemplateView):
    """CLR: accuracy per layer, single cells and value diagnostics, state content, self -> lesson, tokens, gates."""

    benchmark = "clr"
    template = ("evoarena.benchmarks.clr", "report_view.html.j2")

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        from evoarena.benchmarks.clr.views import clr_report

        return clr_report(ctx)
