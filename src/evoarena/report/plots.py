"""Matplotlib figures for the report, drawn off-screen (Agg) and returned as base64 PNG."""

from __future__ import annotations

import base64
import io
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

MECHANISM_LABEL = "evidence: mechanism \u2014 scripted model, not a language-model result"


def evidence_label(evidence: str) -> str:
    """The label every plot title carries."""
    return MECHANISM_LABEL if evidence == "mechanism" else f"evidence: {evidence}"


def evidence_color(evidence: str) -> str:
    """The title colour that goes with the label: red for mechanism evidence."""
    return "#b00020" if evidence == "mechanism" else "black"


def png_base64(fig: Figure) -> str:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    # No "Software" metadata: the PNG bytes then depend only on the figure.
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode("ascii")


def accuracy_plot(results: dict[str, Any]) -> str:
    """Grouped bars of test accuracy with CI error bars: conditions on x, one bar per model."""
    evidence = str(results.get("evidence", ""))
    cells = [c for c in results.get("conditions", []) if c.get("test") and c["test"].get("mean") is not None]
    conditions = sorted({c["condition"] for c in cells})
    models = sorted({c["model"] for c in cells})
    fig = Figure(figsize=(max(6.0, 1.2 * len(conditions) * max(1, len(models)) + 2.0), 4.5))
    ax = fig.add_subplot(1, 1, 1)
    title = f"Test accuracy ({results.get('stats', {}).get('ci_level', 0.95):.0%} bootstrap CI)"
    title += f"\n{evidence_label(evidence)}"
    ax.set_title(title, fontsize=10, color=evidence_color(evidence))
    if not cells:
        ax.text(0.5, 0.5, "no graded test tasks", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return png_base64(fig)
    width = 0.8 / len(models)
    for j, model in enumerate(models):
        xs, heights, lo, hi = [], [], [], []
        for i, condition in enumerate(conditions):
            test = next(
                (c["test"] for c in cells if c["condition"] == condition and c["model"] == model), None
            )
            if test is None:
                continue
            m = test["mean"]
            low = test["ci_low"] if test["ci_low"] is not None else m
            high = test["ci_high"] if test["ci_high"] is not None else m
            xs.append(i - 0.4 + width * (j + 0.5))
            heights.append(m)
            lo.append(max(0.0, m - low))
            hi.append(max(0.0, high - m))
        ax.bar(xs, heights, width=width * 0.9, yerr=[lo, hi], capsize=4, label=model)
    ax.set_xticks(range(len(conditions)))
    rotate = len(conditions) > 4
    ax.set_xticklabels(conditions, rotation=20 if rotate else 0, ha="right" if rotate else "center")
    ax.set_xlabel("condition" if len(models) > 1 else f"condition (model: {models[0]})")
    ax.set_ylim(0.0, 1.05)
    ax.set_ylabel("test accuracy")
    ax.grid(axis="y", alpha=0.3)
    if len(models) > 1:
        ax.legend(title="model", fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return png_base64(fig)
