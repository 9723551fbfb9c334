"""`gepa.optimize`'s report view (results.json `views.gepa.optimize`, its report.html section): per cell, what the
library's run came to — candidates, accepted and rejected proposals, metric calls, why it stopped, the seed's and the
best candidate's val mean and the final candidate's text."""

from __future__ import annotations

from typing import Any

from evoarena.api import view
from evoarena.api.views import ReportContext, TemplateView
from evoarena.store.queries import events

KEYS = ("candidates", "accepted", "rejected", "proposals", "total_metric_calls", "stopped_by", "seed_val_mean",
        "best_idx", "best_val_mean", "final_candidate")


@view("gepa.optimize")
class GepaOptimizeView(TemplateView):
    """`gepa.optimize`: the library's own account of its run, per cell."""

    method = "gepa.optimize"
    template = ("evoarena.methods.lib_gepa", "report_view.html.j2")

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        cells = [{"cell": e.cell, **{k: e.payload.get(k) for k in KEYS}}
                 for e in events(ctx.store, ["gepa_optimize"]) if e.cell is not None]
        return {"cells": cells} if cells else None
