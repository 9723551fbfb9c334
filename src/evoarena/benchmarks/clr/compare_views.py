"""The comparison views of a CLR methods run (the paper's Fig. 4 and its cost and gate statements):

- inc_u against exc, one point per condition, with an arrow from each method's `self` point to its `lesson`
  point (pairs from the spec's method entries, else from `-self` / `-lesson` labels);
- practice tokens per condition and layer (input / output, averaged per chain), as a table and a plot;
- gate statistics (`gates.py`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from matplotlib import colormaps
from matplotlib.figure import Figure

from evoarena.api.views import ReportContext
from evoarena.benchmarks.clr.compare_data import CellData, Pair, read_cells, run_pairs
from evoarena.benchmarks.clr.gates import gate_stats
from evoarena.report.plots import evidence_color, evidence_label, png_base64


def _avg(total: int | None, n: int) -> float | None:
    return None if total is None or not n else round(total / n, 3)


def _sum(values: Sequence[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def token_table(cells: Sequence[CellData]) -> dict[str, dict[str, Any]]:
    """Per condition: practice tokens per chain, per layer and in total. `tokens` comes from the budget meter;
    input / output / update (non-solver roles) from the ledger, None when a cell's ledger could not be aligned."""
    by_cond: dict[str, list[CellData]] = defaultdict(list)
    for c in cells:
        by_cond[c.condition].append(c)
    out: dict[str, dict[str, Any]] = {}
    for cond, group in sorted(by_cond.items()):
        n = sum(len(c.chains) for c in group)
        units = [u for c in group for u in c.units]
        per_layer: dict[int, list[Any]] = defaultdict(list)
        for u in units:
            per_layer[u.layer].append(u)

        def stats(us: Sequence[Any], n: int = n) -> dict[str, Any]:
            return {
                "tokens": _avg(sum(u.tokens for u in us), n),
                "input_tokens": _avg(_sum([u.input_tokens for u in us]), n),
                "output_tokens": _avg(_sum([u.output_tokens for u in us]), n),
                "update_tokens": _avg(_sum([u.update_tokens for u in us]), n),
            }

        out[cond] = {
            "chains": n,
            "layers": {str(k): stats(per_layer[k]) for k in sorted(per_layer)},
            "per_chain": stats(units),
            "ledger_aligned": all(c.aligned for c in group),
            "unattributed_calls": sum(c.unattributed_calls for c in group),
        }
    return out


def pair_rows(pairs: Sequence[Pair], per_condition: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each self -> lesson pair with both points and the change (lesson minus self) in inc_u and exc."""
    rows = []
    for p in pairs:
        a, b = per_condition.get(p.self_condition), per_condition.get(p.lesson_condition)
        if a is None or b is None:
            continue
        row: dict[str, Any] = {"self": p.self_condition, "lesson": p.lesson_condition, "note": p.note,
                               "source": p.source}
        for metric in ("inc_u", "exc"):
            x, y = a[metric]["rate"], b[metric]["rate"]
            row[metric] = {"self": x, "lesson": y, "delta": None if x is None or y is None else round(y - x, 6)}
        rows.append(row)
    return rows


def pair_colours(conditions: Iterable[str],
                 pairs: Sequence[Mapping[str, Any]]) -> tuple[dict[str, str], dict[str, Any]]:
    """({lesson condition: its self condition}, {self-or-unpaired condition: colour}): a pair shares one colour;
    ten colours while they suffice, twenty beyond."""
    family: dict[str, str] = {p["lesson"]: p["self"] for p in pairs}
    heads = list(dict.fromkeys(family.get(c, c) for c in conditions))
    palette = [f"C{i}" for i in range(10)] if len(heads) <= 10 else [colormaps["tab20"](i) for i in range(20)]
    return family, {f: palette[i % len(palette)] for i, f in enumerate(heads)}


def scatter_plot(per_condition: Mapping[str, Any], pairs: Sequence[Mapping[str, Any]], evidence: str) -> str:
    """Generalisation (inc_u: unseen members excluded) against specificity (exc: non-members kept), as the
    paper's Fig. 4: top right is a learned class, bottom right an exception list, top left an over-general rule.
    An arrow runs from a method's self point to its lesson point (a triangle, in the self point's colour)."""
    fig = Figure(figsize=(6.0, 5.2))
    ax = fig.add_subplot(1, 1, 1)
    family, colours = pair_colours(per_condition, pairs)
    at: dict[tuple[float, float], list[str]] = defaultdict(list)  # conditions on the same point share one label
    for cond, v in per_condition.items():
        x, y = v["inc_u"]["rate"], v["exc"]["rate"]
        if x is not None and y is not None:
            ax.scatter([x], [y], s=55, zorder=3, color=colours[family.get(cond, cond)],
                       marker="^" if cond in family else "o")
            at[(x, y)].append(cond)
    for (x, y), names in at.items():
        ax.annotate("\n".join(names), (x, y), textcoords="offset points", xytext=(6, -4), fontsize=7, va="top",
                    ha="left" if x < 0.7 else "right")
    for p in pairs:
        x0, x1, y0, y1 = p["inc_u"]["self"], p["inc_u"]["lesson"], p["exc"]["self"], p["exc"]["lesson"]
        if None in (x0, x1, y0, y1):
            continue
        if (x0, y0) == (x1, y1):  # no movement: ring the point so the pair stays visible
            ax.scatter([x0], [y0], s=260, facecolors="none", edgecolors="#444", zorder=2)
        else:
            ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                        arrowprops={"arrowstyle": "->", "color": "#444", "lw": 1.4}, zorder=4)
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("inc_u (unseen members excluded)")
    ax.set_ylabel("exc (non-members kept)")
    ax.grid(alpha=0.3)
    ax.set_title(f"Generalisation vs specificity (arrows: self \u2192 lesson)\n{evidence_label(evidence)}",
                 fontsize=10, color=evidence_color(evidence))
    fig.tight_layout()
    return png_base64(fig)


def tokens_plot(tokens: Mapping[str, Any], pairs: Sequence[Mapping[str, Any]], evidence: str) -> str:
    """Grouped bars: input and output practice tokens per chain, per layer, one bar per condition; a lesson bar
    stands next to its self bar, in its colour, hatched."""
    fig = Figure(figsize=(9.0, 4.0))
    family, colours = pair_colours(tokens, pairs)
    order = list(colours)

    def place(cond: str) -> tuple[int, bool]:
        return order.index(family.get(cond, cond)), cond in family

    conds = sorted(tokens, key=place)
    layers = sorted({int(k) for t in tokens.values() for k in t["layers"]})
    width = 0.8 / max(1, len(conds))
    for i, (what, label) in enumerate((("input_tokens", "input"), ("output_tokens", "output"))):
        ax = fig.add_subplot(1, 2, i + 1)
        values = []
        for j, cond in enumerate(conds):
            ys = [tokens[cond]["layers"].get(str(k), {}).get(what) or 0.0 for k in layers]
            values += [y for y in ys if y > 0]
            ax.bar([k - 0.4 + width * (j + 0.5) for k in layers], ys, width=width * 0.9, label=cond,
                   color=colours[family.get(cond, cond)], hatch="////" if cond in family else None,
                   edgecolor="white", linewidth=0)
        if values and max(values) / min(values) > 50:
            ax.set_yscale("log")
        ax.set_xticks(layers)
        ax.set_xlabel("layer")
        ax.set_ylabel(f"{label} tokens per chain (practice)")
        ax.grid(axis="y", alpha=0.3)
        if i == 1:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(f"Practice tokens per chain and layer\n{evidence_label(evidence)}", fontsize=10,
                 color=evidence_color(evidence))
    fig.tight_layout()
    return png_base64(fig)


def compare_views(ctx: ReportContext, per_condition: Mapping[str, Any]) -> dict[str, Any]:
    """The comparison views; `per_condition` is `clr_views(...)["conditions"]` (inc_u / exc per condition)."""
    evidence = ctx.evidence
    cells = read_cells(ctx.store, ctx.run_cells())
    pairs = pair_rows(run_pairs(ctx.spec, [*per_condition, *(c.condition for c in cells)]), per_condition)
    tokens = token_table(cells)
    return {
        "pairs": pairs,
        "scatter": scatter_plot(per_condition, pairs, evidence) if per_condition else None,
        "tokens": tokens,
        "tokens_plot": tokens_plot(tokens, pairs, evidence) if tokens else None,
        "gates": gate_stats(ctx, cells),
    }
