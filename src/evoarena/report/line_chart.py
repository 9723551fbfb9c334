"""A small line chart as inline SVG (HTML5, no namespace, no script): one polyline per series, labelled axes, and a
y axis spanning the data's range (rounded to ticks), not a fixed 0–1 that would flatten small differences. Used by
report.html's learning curves and the viewer's curves page."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from .chart import PALETTE

_W, _H = 760.0, 300.0
_LEFT, _RIGHT, _TOP, _BOTTOM = 72.0, 170.0, 34.0, 48.0
MARKERS_UP_TO = 80  # points per series drawn as dots (with a tooltip) when there are no more than this


@dataclass(frozen=True)
class Series:
    name: str
    points: Sequence[tuple[float, float]]  # (x, y), in x order
    band: Sequence[tuple[float, float, float]] = ()  # (x, low, high): a confidence band drawn under the line
    colour: int | None = None  # the palette index (default: the series' place), so two series can share a colour
    dashed: bool = False  # a dashed line with bigger dots (e.g. checkpoints beside a running mean)


def nice_range(lo: float, hi: float, *, bounds: tuple[float, float] | None = None,
               include_zero: bool = False, ticks: int = 5) -> tuple[float, float, list[float]]:
    """(low, high, tick values): [lo, hi] widened to round ticks, at most `ticks`+1 of them, kept inside `bounds`
    (e.g. 0–1 for scores). A flat series gets a small band around its value."""
    if include_zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi - lo < 1e-12:
        pad = 0.05 if bounds else max(abs(lo) * 0.1, 1.0)
        lo, hi = lo - pad, hi + pad
    if bounds:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    raw = (hi - lo) / ticks
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    low, high = math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step
    if bounds:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    n = int(round((high - low) / step))
    return low, high, [round(low + i * step, 10) for i in range(n + 1)]


def _fmt(v: float) -> str:
    if abs(v) >= 1e6:
        return f"{v / 1e6:.3g}M"
    if abs(v) >= 1e4:
        return f"{v / 1e3:.3g}k"
    return f"{v:.3g}" if not float(v).is_integer() else f"{int(v)}"


def line_svg(series: Sequence[Series], *, title: str, x_label: str, y_label: str, chart_id: str = "",
             y_bounds: tuple[float, float] | None = None, y_zero: bool = False) -> Markup:
    """The chart of `series`; `y_bounds` keeps the axis inside them (scores: (0, 1)), `y_zero` starts it at 0
    (cumulative counts)."""
    pts = [p for s in series for p in s.points] + [(x, y) for s in series for x, lo, hi in s.band for y in (lo, hi)]
    ident = f' id="{escape(chart_id)}"' if chart_id else ""
    head = (f'<svg{ident} class="plot line-chart" width="{_W:.0f}" height="{_H:.0f}" viewBox="0 0 {_W:.0f} {_H:.0f}"'
            f' role="img" aria-label="{escape(title)}" font-family="sans-serif" font-size="11">'
            f'<text x="{(_LEFT + _W - _RIGHT) / 2:.1f}" y="16" text-anchor="middle" font-size="13">'
            f"{escape(title)}</text>")
    if not pts:
        return Markup(head + f'<text x="{_W / 2:.1f}" y="{_H / 2:.1f}" text-anchor="middle">no data yet</text></svg>')
    x0, x1, xticks = nice_range(min(p[0] for p in pts), max(p[0] for p in pts), ticks=8)
    y0, y1, yticks = nice_range(min(p[1] for p in pts), max(p[1] for p in pts), bounds=y_bounds, include_zero=y_zero)
    right, bottom = _W - _RIGHT, _H - _BOTTOM

    def sx(x: float) -> float:
        return _LEFT + (right - _LEFT) * (x - x0) / ((x1 - x0) or 1.0)

    def sy(y: float) -> float:
        return bottom - (bottom - _TOP) * (y - y0) / ((y1 - y0) or 1.0)

    parts = [head]
    for t in yticks:
        parts.append(f'<line x1="{_LEFT}" x2="{right:.1f}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" stroke="#e3e3e3"/>'
                     f'<text x="{_LEFT - 6}" y="{sy(t) + 4:.1f}" text-anchor="end">{_fmt(t)}</text>')
    for t in xticks:
        parts.append(f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{bottom:.1f}" y2="{bottom + 4:.1f}" stroke="#333"/>'
                     f'<text x="{sx(t):.1f}" y="{bottom + 16:.1f}" text-anchor="middle">{_fmt(t)}</text>')
    parts.append(f'<path d="M{_LEFT} {_TOP}V{bottom:.1f}H{right:.1f}" stroke="#333" fill="none"/>'
                 f'<text class="x-label" x="{(_LEFT + right) / 2:.1f}" y="{_H - 8:.1f}" text-anchor="middle">'
                 f'{escape(x_label)}</text>'
                 f'<text class="y-label" transform="translate(16 {(_TOP + bottom) / 2:.1f}) rotate(-90)" '
                 f'text-anchor="middle">{escape(y_label)}</text>')
    for i, s in enumerate(series):
        colour = PALETTE[(i if s.colour is None else s.colour) % len(PALETTE)]
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in s.points)
        last = f' data-last="{s.points[-1][1]:.12g}"' if s.points else ""
        parts.append(f'<g class="series" data-series="{escape(s.name)}" data-points="{len(s.points)}"{last}>')
        if s.band:
            edge = [f"{sx(x):.1f},{sy(hi):.1f}" for x, _, hi in s.band]
            edge += [f"{sx(x):.1f},{sy(lo):.1f}" for x, lo, _ in reversed(s.band)]
            parts.append(f'<polygon class="band" points="{" ".join(edge)}" fill="{colour}" fill-opacity="0.15"'
                         ' stroke="none"/>')
        parts.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="1.8"{dash}/>')
        if len(s.points) <= MARKERS_UP_TO:
            radius = 3.8 if s.dashed else 2.6
            for x, y in s.points:
                parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="{radius}" fill="{colour}">'
                             f'<title>{escape(s.name)}: {_fmt(x)} → {y:.4g}</title></circle>')
        ly = _TOP + 6 + 16 * i
        parts.append(f'</g><line x1="{right + 14:.1f}" x2="{right + 26:.1f}" y1="{ly + 1.5:.1f}" y2="{ly + 1.5:.1f}"'
                     f' stroke="{colour}" stroke-width="3"{dash}/>'
                     f'<text x="{right + 32:.1f}" y="{ly + 5:.1f}">{escape(s.name)}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))
