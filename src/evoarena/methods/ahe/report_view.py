"""AHE's report view (results.json `views.ahe`, its report.html section), registered as `ahe`: per cell, every
round's change evaluation — verdicts, flipped / regressed tasks, unattributed regressions, fix and regression
precision / recall — and the pooled figures next to the paper's (Fig. 4: fix 33.7 / 51.4, regression 11.8 / 11.1)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from evoarena.api import view
from evoarena.api.views import ReportContext, TemplateView
from evoarena.store.queries import events

PAPER = {"fix_precision": 0.337, "fix_recall": 0.514, "regression_precision": 0.118, "regression_recall": 0.111}


@view("ahe")
class AheView(TemplateView):
    """AHE: how well each round's manifest predicted what its changes fixed and broke."""

    method = "ahe"
    template = ("evoarena.methods.ahe", "report_view.html.j2")

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        cells: dict[str, dict[str, Any]] = {}
        for e in events(ctx.store, ["ahe_round"]):
            if e.cell is None:
                continue
            p = e.payload
            cell = cells.setdefault(e.cell, {"cell": e.cell, "rounds": [], "pooled": {}})
            evaluation = p.get("evaluation") or {}
            cell["rounds"].append({
                "round": p.get("round"), "verdicts": dict(Counter((p.get("verdicts") or {}).values())),
                "flipped": len(evaluation.get("flipped", ())), "regressed": len(evaluation.get("regressed", ())),
                "unattributed": len(p.get("unattributed_regressions") or ()),
                "fix": (p.get("fix_precision"), p.get("fix_recall")),
                "regression": (p.get("regression_precision"), p.get("regression_recall")),
                "rolled_back": list(p.get("rolled_back") or ()),
            })
            pooled = p.get("pooled_pr") or {}
            cell["pooled"] = {f"{kind} {name}": (pooled.get(kind) or (None, None))[i]
                              for kind in ("fix", "regression") for i, name in enumerate(("precision", "recall"))}
        return {"cells": list(cells.values()), "paper": PAPER} if cells else None
