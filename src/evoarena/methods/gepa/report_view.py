"""GEPA's report view (results.json `views.gepa`, its report.html section), registered as `gepa`: per cell, the
reflective iterations, how many were accepted and how many proposals were skipped unevaluated as identical to
their parent, and every merge — its two parents, their common ancestor, the
parents' subsample sums and the merged candidate's, accepted or not — with the merges that found no pair. Present
when a run has merge events or skipped copies (otherwise the lineage shows it all)."""

from __future__ import annotations

from typing import Any

from evoarena.api import view
from evoarena.api.views import ReportContext, TemplateView
from evoarena.methods.gepa.method import SAME
from evoarena.store.queries import events


@view("gepa")
class GepaView(TemplateView):
    """GEPA: accepted reflective proposals, proposals identical to their parent, and the merges of each cell."""

    method = "gepa"
    template = ("evoarena.methods.gepa", "report_view.html.j2")

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        cells: dict[str, dict[str, Any]] = {}
        merged = copies = False
        for e in events(ctx.store, ["gepa_iteration", "gepa_merge"]):
            if e.cell is None:
                continue
            c = cells.setdefault(e.cell, {"cell": e.cell, "iterations": 0, "accepted": 0, "merges": [],
                                          "no_pair": 0, "identical": 0})
            p = e.payload
            if e.kind == "gepa_iteration" and p.get("skipped") == SAME:
                copies = True
                c["identical"] += 1
            elif e.kind == "gepa_iteration":
                c["iterations"] += 1
                c["accepted"] += bool(p.get("accepted"))
            elif p.get("merged"):
                merged = True
                c["merges"].append({"parents": p["parents"], "ancestor": p["ancestor"], "before": p["before"],
                                    "after": sum(p["after"]), "accepted": bool(p["accepted"])})
            else:
                merged = True
                c["no_pair"] += 1
        if not (merged or copies):
            return None
        rows = [cells[k] for k in sorted(cells)]
        for c in rows:
            c["merges_accepted"] = sum(m["accepted"] for m in c["merges"])
        return {"cells": rows}
