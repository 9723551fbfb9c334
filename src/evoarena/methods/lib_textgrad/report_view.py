"""TextGrad's report view (results.json `views.textgrad`, its report.html section), registered as `textgrad`: per
`textgrad.TGD` cell, what became of its optimizer steps — kept, reverted by validation, rejected (no
`<IMPROVED_VARIABLE>` span), no reply — and the val accuracy of the kept prompt, from the starting one on."""

from __future__ import annotations

from typing import Any

from evoarena.api import view
from evoarena.api.views import ReportContext, TemplateView
from evoarena.store.queries import cells, events

METHOD = "textgrad.TGD"


@view("textgrad")
class TextGradView(TemplateView):
    """TextGrad: the fate of each optimizer step and the validation curve of the kept prompt."""

    method = METHOD
    template = ("evoarena.methods.lib_textgrad", "report_view.html.j2")

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        ours = {c.cell: c for c in cells(ctx.store) if c.method == METHOD}
        if not ours:
            return None
        rows: dict[str, dict[str, Any]] = {
            cell: {"cell": cell, "condition": c.condition, "seed": c.seed, "steps": 0, "kept": 0, "reverted": 0,
                   "rejected": 0, "no_reply": 0, "val": []}
            for cell, c in ours.items()}
        for e in events(ctx.store, ["textgrad_seed", "textgrad_step", "textgrad_no_reply", "rejected_output"]):
            row = rows.get(e.cell or "")
            if row is None:
                continue
            if e.kind == "textgrad_seed":
                row["val"].insert(0, e.payload["val"])
            elif e.kind == "textgrad_step":
                row["steps"] += 1
                row["kept" if e.payload.get("kept") else "reverted"] += 1
                if e.payload.get("val") is not None:
                    row["val"].append(e.payload["val"] if e.payload.get("kept") else e.payload["previous"])
            else:
                row["steps"] += 1
                row["rejected" if e.kind == "rejected_output" else "no_reply"] += 1
        return {"cells": list(rows.values())}
