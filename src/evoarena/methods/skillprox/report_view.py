"""SkillProx's report view (results.json `views.skillprox`, its report.html section), registered as `skillprox`.

Light on import: the views and their plots load when a run with a SkillProx cell is reported.
"""

from __future__ import annotations

from typing import Any

from evoarena.api import view
from evoarena.api.views import ReportContext, TemplateView


@view("skillprox")
class SkillProxView(TemplateView):
    """SkillProx: skill length and compression by Prox, forward candidates and iterations, the Prox unit audit."""

    method = "skillprox"
    template = ("evoarena.methods.skillprox", "report_view.html.j2")

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        from evoarena.methods.skillprox.views import skillprox_views

        return skillprox_views(ctx) or None
