"""The paper's views of a CLR run, computed from the per-stage diagnostics the curriculum runner stores:
accuracy per layer against the frozen ladder, single-cell accuracy, inc / inc_u / exc, and the string-match
content of the final per-layer states. The cross-condition views (inc_u vs exc with self -> lesson arrows,
tokens, gates) are in compare_views.py; `clr_report` is what the registered view (report_view.py) puts at
results.json `views.clr`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib.figure import Figure

from evoarena.api.views import ReportContext
from evoarena.benchmarks.clr.compare_views import compare_views
from evoarena.benchmarks.clr.metrics import ValueOutcome, aggregate
from evoarena.report.plots import evidence_color, evidence_label, png_base64
from evoarena.store import RunStore, queries
from evoarena.store.queries import CellRow

FROZEN_LADDER = {1: 0.8, 2: 0.6, 3: 0.4, 4: 0.2}


@dataclass(frozen=True)
class Stage:
    """One graded curriculum stage of a cell: its condition, score and the benchmark's diagnostics."""

    condition: str
    score: float | None
    diagnostics: dict[str, Any]


def stages(store: RunStore, cells: Sequence[CellRow]) -> list[Stage]:
    """Every graded stage (unit `test/...`) that carries diagnostics (ClrBenchmark.diagnose), by cell and key."""
    conditions = {c.cell: c.condition for c in cells}
    return [
        Stage(conditions[u.cell], u.result.get("score"), u.result["diagnostics"])
        for u in queries.units(store, key_like="test/%", order="key")
        if u.result.get("diagnostics") and u.cell in conditions
    ]


def clr_report(ctx: ReportContext) -> dict[str, Any]:
    """`views.clr`: the per-condition views and, under `compare`, the comparison views."""
    views = clr_views(stages(ctx.store, ctx.run_cells()), ctx.evidence)
    views["compare"] = compare_views(ctx, views["conditions"])
    return views


def _rate(hits: int, n: int) -> float | None:
    return round(hits / n, 6) if n else None


def _state_shares(states: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Shares of final states (string match, metrics.state_diagnostics) holding the revealed member m0, naming
    the class (name or alias) and holding its full name (the paper's §7.3 figures)."""
    n = len(states)
    return {
        "n": n,
        "revealed_member_share": _rate(sum(st["revealed_member"] for st in states), n),
        "names_class_share": _rate(sum(st["names_class"] for st in states), n),
        "full_class_name_share": _rate(sum(st["full_class_name"] for st in states), n),
    }


def clr_views(stages: Sequence[Stage], evidence: str) -> dict[str, Any]:
    """Accuracy per layer, single cells, inc / inc_u / exc and state content per condition, from graded stages."""
    by_cond: dict[str, list[Stage]] = defaultdict(list)
    for s in stages:
        if s.diagnostics:
            by_cond[str(s.condition)].append(s)
    per_condition: dict[str, Any] = {}
    for cond, rows in sorted(by_cond.items()):
        layers: dict[int, list[float]] = defaultdict(list)
        single = [c for r in rows for c in r.diagnostics["cells"] if c["kind"] == "single"]
        outcomes = [ValueOutcome(**v) for r in rows for v in r.diagnostics["values"]]
        for r in rows:
            layers[int(r.diagnostics["layer"])].append(float(r.score or 0.0))
        agg = aggregate(outcomes)
        # the state after layer k, judged on layer k's own rule (the paper's "final states")
        own = [
            st for r in rows for st in r.diagnostics.get("states", []) if st["layer"] == r.diagnostics["layer"]
        ]
        per_condition[cond] = {
            "layer_accuracy": {str(k): round(sum(v) / len(v), 6) for k, v in sorted(layers.items())},
            "single_cell_accuracy": {
                "hits": sum(c["correct"] for c in single),
                "n": len(single),
                "rate": _rate(sum(c["correct"] for c in single), len(single)),
            },
            "inc": agg["inc"],
            "inc_u": agg["inc_u"],
            "exc": agg["exc"],
            "states": _state_shares(own),
            "states_by_layer": {
                str(k): _state_shares([st for st in own if st["layer"] == k])
                for k in sorted({st["layer"] for st in own})
            },
        }
    return {
        "frozen_ladder": {str(k): v for k, v in FROZEN_LADDER.items()},
        "conditions": per_condition,
        "plot": _layer_plot(per_condition, evidence) if per_condition else None,
    }


def _layer_plot(per_condition: dict[str, Any], evidence: str) -> str:
    fig = Figure(figsize=(6.5, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    xs = sorted(FROZEN_LADDER)
    ax.plot(xs, [FROZEN_LADDER[x] for x in xs], "k--", label="frozen ladder")
    for cond, v in per_condition.items():
        pts = sorted((int(k), a) for k, a in v["layer_accuracy"].items())
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=cond)
    ax.set_xticks(xs)
    ax.set_xlabel("layer")
    ax.set_ylabel("layer accuracy")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    ax.set_title(
        f"CLR accuracy per layer\n{evidence_label(evidence)}",
        fontsize=10,
        color=evidence_color(evidence),
    )
    return png_base64(fig)
