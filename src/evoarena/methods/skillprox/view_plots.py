"""Figures of the SkillProx views (base64 PNG, every title carrying the evidence label): the deployed skill's
characters in SKILL.md vs active references per cell (the paper's Table 4), and test hard accuracy against the
compression Prox achieved (the paper's Figure 2; conditions without Prox sit at 0)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from matplotlib.figure import Figure

from evoarena.report.plots import evidence_color, evidence_label, png_base64


def _label(cell: Mapping[str, Any], cells: Sequence[Mapping[str, Any]]) -> str:
    """The condition, with seed (and model) only when they tell cells apart."""
    text = str(cell["condition"])
    if len({c["model"] for c in cells}) > 1:
        text += f" ({cell['model']})"
    if len({c["seed"] for c in cells if c["condition"] == cell["condition"]}) > 1:
        text += f" s{cell['seed']}"
    return text


def _title(ax: Any, text: str, evidence: str) -> None:
    ax.set_title(f"{text}\n{evidence_label(evidence)}", fontsize=10, color=evidence_color(evidence))


def chars_plot(cells: Sequence[Mapping[str, Any]], evidence: str) -> str:
    """Stacked bars: SKILL.md and active-reference characters of the deployed skill; X_f's total as a tick."""
    fig = Figure(figsize=(max(6.0, 1.1 * len(cells) + 2.5), 4.2))
    ax = fig.add_subplot(1, 1, 1)
    xs = list(range(len(cells)))
    main = [c["final_chars"]["main_chars"] for c in cells]
    refs = [c["final_chars"]["reference_chars"] for c in cells]
    ax.bar(xs, main, width=0.6, label="SKILL.md (L1/L2)", color="#4c72b0")
    ax.bar(xs, refs, width=0.6, bottom=main, label="active references (L3)", color="#dd8452")
    before = [(x, c["prox"]["G_f"]) for x, c in zip(xs, cells, strict=True) if c.get("prox")]
    if before:
        ax.scatter([b[0] for b in before], [b[1] for b in before], marker="_", s=900, color="black", zorder=3,
                   label="X_f before Prox")
    ax.set_xticks(xs)
    ax.set_xticklabels([_label(c, cells) for c in cells], rotation=20 if len(cells) > 4 else 0,
                       ha="right" if len(cells) > 4 else "center")
    ax.set_ylabel("characters")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _title(ax, "Deployed skill length: SKILL.md vs references", evidence)
    fig.tight_layout()
    return png_base64(fig)


def tradeoff_plot(cells: Sequence[Mapping[str, Any]], baselines: Sequence[Mapping[str, Any]],
                  evidence: str) -> str | None:
    """Test hard accuracy against compression by Prox (0 without Prox); baselines as dashed lines. None when no
    cell has a test hard accuracy."""
    points = [(c["prox"]["compression"] if c.get("prox") else 0.0, c["test"]["hard"]["mean"], _label(c, cells))
              for c in cells if c.get("test") and c["test"].get("hard")]
    if not points:
        return None
    fig = Figure(figsize=(6.5, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    ax.scatter([p[0] for p in points], [p[1] for p in points], color="#4c72b0", zorder=3)
    names: dict[tuple[float, float], list[str]] = {}
    for x, y, name in points:  # conditions on the same point share one label
        names.setdefault((round(x, 6), round(y, 6)), []).append(name)
    for (x, y), same in names.items():
        ax.annotate(", ".join(same), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    for b in baselines:
        if b.get("test") and b["test"].get("hard"):
            ax.axhline(b["test"]["hard"]["mean"], linestyle="--", color="grey", linewidth=1)
            ax.annotate(str(b["condition"]), (0.0, b["test"]["hard"]["mean"]), textcoords="offset points",
                        xytext=(2, -10), fontsize=8, color="grey")
    ax.set_xlabel("compression of X_f by Prox (0: no Prox)")
    ax.set_ylabel("test hard accuracy")
    ax.set_xlim(-0.05, 1.0)
    ax.set_ylim(-0.02, 1.05)
    ax.grid(alpha=0.3)
    _title(ax, "Compression vs test hard accuracy", evidence)
    fig.tight_layout()
    return png_base64(fig)
