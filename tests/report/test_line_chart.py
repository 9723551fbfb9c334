"""The line chart's axes: the y axis spans the data's range (small differences stay visible), kept inside the
bounds given; labels and series are escaped; an empty chart says so."""

from __future__ import annotations

import re

from evoarena.report.line_chart import Series, line_svg, nice_range


def _yticks(svg: str) -> list[float]:
    return [float(t) for t in re.findall(r'text-anchor="end">([-0-9.]+)</text>', svg)]


def test_the_y_axis_spans_the_data_not_zero_to_one() -> None:
    svg = str(line_svg([Series("a", [(1, 0.81), (2, 0.84)]), Series("b", [(1, 0.82), (2, 0.83)])],
                       title="t", x_label="step", y_label="score", y_bounds=(0.0, 1.0)))
    ticks = _yticks(svg)
    assert min(ticks) >= 0.8 and max(ticks) <= 0.85 and len(ticks) >= 3
    assert svg.count('class="series"') == 2 and 'data-points="2"' in svg


def test_wide_data_keeps_zero_to_one_and_bounds_hold() -> None:
    assert nice_range(0.0, 1.0, bounds=(0.0, 1.0))[:2] == (0.0, 1.0)
    low, high, ticks = nice_range(0.97, 1.0, bounds=(0.0, 1.0))
    assert high == 1.0 and low >= 0.9 and ticks[-1] == 1.0
    assert nice_range(0.5, 0.5, bounds=(0.0, 1.0))[:2] == (0.45, 0.55)  # a flat line gets a band around it
    assert nice_range(10.0, 90.0, include_zero=True)[0] == 0.0


def test_names_are_escaped_and_an_empty_chart_says_so() -> None:
    svg = str(line_svg([Series("<b>x</b>", [(1, 1.0)])], title="t<", x_label="x", y_label="y"))
    assert "<b>" not in svg and "&lt;b&gt;x&lt;/b&gt;" in svg and "t&lt;" in svg
    assert "no data yet" in str(line_svg([], title="t", x_label="x", y_label="y"))
