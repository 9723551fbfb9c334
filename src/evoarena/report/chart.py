"""The report's accuracy chart as inline SVG: grouped bars of test accuracy with CI whiskers, drawn from
results.json alone (inline in HTML5, so no namespace). A run's report then imports no plotting library; matplotlib is
for the views that need one."""

from __future__ import annotations

from markupsafe import Markup, escape

from .labels import evidence_color, evidence_label
from .results_record import RunResults

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")
_PLOT_H, _TOP, _LEFT, _BOTTOM = 260.0, 56.0, 56.0, 64.0


def accuracy_svg(results: RunResults) -> Markup:
    """Conditions on x (in results order), one bar per model, y from 0 to 1.05; titled with the evidence label."""
    evidence = results.evidence
    level = results.stats.ci_level
    tests = {(c.condition, c.model): c.test for c in results.conditions if c.test and c.test.mean is not None}
    conditions = list(dict.fromkeys(c for c, _ in tests))
    models = sorted({m for _, m in tests})
    slot = max(70.0, 28.0 * max(1, len(models)))
    legend_w = 150.0 if len(models) > 1 else 0.0
    width = max(480.0, _LEFT + slot * max(1, len(conditions)) + 24.0 + legend_w)
    height = _TOP + _PLOT_H + _BOTTOM
    title = f"Test accuracy ({level:.0%} bootstrap CI)"
    parts = [
        f'<svg class="plot" width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'role="img" aria-label="{escape(title)} ({escape(evidence_label(evidence))})" font-family="sans-serif" '
        'font-size="11">',
        f'<text x="{width / 2:.1f}" y="18" text-anchor="middle" font-size="13">{escape(title)}</text>',
        f'<text x="{width / 2:.1f}" y="36" text-anchor="middle" fill="{evidence_color(evidence)}">'
        f"{escape(evidence_label(evidence))}</text>",
    ]
    if not tests:
        parts.append(f'<text x="{width / 2:.1f}" y="{_TOP + _PLOT_H / 2:.1f}" text-anchor="middle">'
                     "no graded test tasks</text></svg>")
        return Markup("".join(parts))
    right = width - 24.0 - legend_w
    for tick in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        y = _y(tick)
        parts.append(f'<line x1="{_LEFT}" x2="{right:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
                     f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:.1f}</text>')
    parts.append(f'<line x1="{_LEFT}" x2="{_LEFT}" y1="{_TOP}" y2="{_y(0.0):.1f}" stroke="#333"/>'
                 f'<text transform="translate(16 {_TOP + _PLOT_H / 2:.1f}) rotate(-90)" text-anchor="middle">'
                 "test accuracy</text>")
    bar = 0.8 * slot / len(models)
    for i, condition in enumerate(conditions):
        x0 = _LEFT + slot * i
        parts.append(f'<text x="{x0 + slot / 2:.1f}" y="{_y(0.0) + 16:.1f}" text-anchor="middle">'
                     f"{escape(condition)}</text>")
        for j, model in enumerate(models):
            test = tests.get((condition, model))
            if test is None or test.mean is None:
                continue
            m = test.mean
            low = m if test.ci_low is None else test.ci_low
            high = m if test.ci_high is None else test.ci_high
            x = x0 + 0.1 * slot + bar * j
            cx, colour = x + bar / 2, PALETTE[j % len(PALETTE)]
            tip = f"{condition} · {model}: {m:.3f} [{low:.3f}, {high:.3f}]"
            parts.append(
                f'<rect x="{x + 0.05 * bar:.1f}" y="{_y(m):.1f}" width="{0.9 * bar:.1f}" '
                f'height="{_y(0.0) - _y(m):.1f}" fill="{colour}"><title>{escape(tip)}</title></rect>'
                f'<path d="M{cx:.1f} {_y(high):.1f}V{_y(low):.1f}M{cx - 4:.1f} {_y(high):.1f}h8'
                f'M{cx - 4:.1f} {_y(low):.1f}h8" stroke="#222" fill="none"/>')
    caption = "condition" if len(models) > 1 else f"condition (model: {models[0]})"
    parts.append(f'<text x="{(_LEFT + right) / 2:.1f}" y="{height - 14:.1f}" text-anchor="middle">'
                 f"{escape(caption)}</text>")
    if len(models) > 1:
        for j, model in enumerate(models):
            y = _TOP + 16.0 * j
            parts.append(f'<rect x="{right + 16:.1f}" y="{y:.1f}" width="10" height="10" '
                         f'fill="{PALETTE[j % len(PALETTE)]}"/><text x="{right + 32:.1f}" y="{y + 9:.1f}">'
                         f"{escape(model)}</text>")
    parts.append("</svg>")
    return Markup("".join(parts))


def _y(value: float) -> float:
    return _TOP + _PLOT_H * (1.0 - max(0.0, min(1.05, value)) / 1.05)
