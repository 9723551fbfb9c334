"""The DSPy optimisers' report view (results.json `views.lib_dspy`, its report.html section), registered as
`lib_dspy`: per cell, the optimiser, DSPy's version, the compiled program the cell tested (instructions, demos,
bootstrapped demos), the practice calls by role and graded rollouts it took, and why it stopped early if it did."""

from __future__ import annotations

from collections import Counter
from typing import Any

from evoarena.api import view
from evoarena.api.views import ReportContext, RunInfo, TemplateView
from evoarena.store.queries import calls, events, phase_attempt_ids


@view("lib_dspy")
class DSPyView(TemplateView):
    """DSPy's optimisers: what each compiled, with what."""

    template = ("evoarena.methods.lib_dspy", "report_view.html.j2")

    def applies(self, run: RunInfo) -> bool:
        return any(m.startswith("dspy.") for m in run.methods)

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        stopped = {e.cell: e.payload for e in events(ctx.store, ["library_stopped"]) if e.cell}
        libraries = ctx.meta.extra.get("libraries")
        versions: dict[str, Any] = libraries if isinstance(libraries, dict) else {}
        cells = []
        for c in ctx.run_cells():
            if not c.method.startswith("dspy."):
                continue
            version = c.selected_version or c.current_version
            state = ctx.method_state(c.method, version) if version else {}
            roles = Counter(row.role for row in calls(ctx.store, cell=c.cell, phase="practice"))
            cells.append({
                "cell": c.cell, "optimiser": c.method, "library": versions.get(c.condition, ""),
                "instructions": str(state.get("instructions", ""))[:400], "demos": state.get("demos", 0),
                "bootstrapped": state.get("bootstrapped", 0), "calls": dict(sorted(roles.items())),
                "rollouts": len(phase_attempt_ids(ctx.store, c.cell, "rollout")),
                "stopped": (stopped.get(c.cell) or {}).get("reason"),
            })
        return {"cells": cells} if cells else None
