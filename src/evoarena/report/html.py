"""render_html / write_report: the self-contained report page and results.json on disk.

The sections of benchmarks and methods are drawn by the report views passed in, from results.json's `views` alone.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from .chart import accuracy_svg
from .hooks import ReportView
from .labels import MECHANISM_LABEL, evidence_label
from .line_chart import Series, line_svg
from .results_record import RESULTS_FILE, RunResults, SpendCurves
from .store_sections import MAX_TASKS, ReportExtras

__all__ = ["REPORT_FILE", "RESULTS_FILE", "render_html", "write_report"]

REPORT_FILE = "report.html"


@functools.cache
def _env() -> jinja2.Environment:
    """One environment per process: it keeps the compiled report template (compiling it costs ~0.1 s)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("evoarena.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["pct"] = _pct
    env.filters["num"] = _num
    env.filters["usd"] = _usd
    env.filters["tok"] = _tok
    env.filters["label"] = _label
    env.filters["plain"] = _plain
    env.filters["signed"] = _signed
    return env


def _pct(value: float | None) -> str:
    return "\u2013" if value is None else f"{100.0 * value:.1f}%"


def _num(value: int | float | None) -> str:
    if value is None:
        return "\u2013"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.3f}"
    return f"{int(value):,}"


def _tok(value: float | None) -> str:
    """A token count (possibly a mean over chains), to the nearest token."""
    return "\u2013" if value is None else f"{value:,.0f}"


def _usd(value: float | None) -> str:
    return "\u2013" if value is None else f"${value:,.4f}"


def _label(value: str | None) -> str:
    return "(none)" if value is None else str(value)


def _signed(value: float | None) -> str:
    """A utility or difference with its sign (4 decimals)."""
    return "\u2013" if value is None else f"{value:+.4f}"


def _plain(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _banner(evidence: str) -> tuple[str, str]:
    """(css class, text) of the evidence banner."""
    if evidence == "mechanism":
        return "mechanism", MECHANISM_LABEL
    return "lm", f"evidence: {evidence} \u2014 language-model run"


@dataclass
class Page:
    """The page helpers a view draws its section with (hooks.ViewPage): the evidence label and the report's
    template environment (its filters, autoescaping), with the results as `r`."""

    results: RunResults
    evidence: str
    evidence_caption: str
    banner_class: str
    env: jinja2.Environment = field(default_factory=_env, repr=False)

    def render(self, source: str, **context: Any) -> str:
        return self.env.from_string(source).render(
            r=self.results, evidence=self.evidence, banner_class=self.banner_class,
            evidence_caption=self.evidence_caption, **context,
        )  # fmt: skip


def render_html(results: RunResults, views: Mapping[str, ReportView] | None = None,
                extras: ReportExtras | None = None) -> str:
    """One self-contained HTML page: inline CSS, the accuracy chart as inline SVG, no external references. A section per
    entry of `results.views` whose view is in `views` (by name), in the order of `views`; with `extras` (from the
    store) the selected harnesses and their diffs, the per-task table and the learning curves."""
    evidence = results.evidence
    banner_class, banner_text = _banner(evidence)
    budgets = results.budgets
    budget_columns = sorted({k.removeprefix("max_") for b in budgets for k in b.limits} | {k for b in budgets
                                                                                           for k in b.used})
    env = _env()
    page = Page(results, evidence, evidence_label(evidence), banner_class, env)
    data = results.views_data()
    sections = [Markup(view.html(data[name], page)) for name, view in (views or {}).items() if data.get(name)]
    template = env.get_template("report.html.j2")
    return template.render(
        r=results,
        budget_columns=budget_columns,
        meta=results.meta,
        evidence=evidence,
        banner_class=banner_class,
        banner_text=banner_text,
        evidence_caption=evidence_label(evidence),
        plot_svg=accuracy_svg(results),
        sections=sections,
        extras=extras,
        max_tasks=MAX_TASKS,
        spend_svgs=spend_svgs(results.spend_curves) if results.spend_curves else [],
    )


AXIS_LABELS = {"calls": "practice calls", "tokens": "practice tokens", "usd": "practice spend (USD)"}


def spend_svgs(curves: SpendCurves) -> list[Markup]:
    """One chart per spend axis: a line per condition × model with its 95% CI band."""
    out = []
    for axis, label in AXIS_LABELS.items():
        series = [Series(f"{c.condition} ({c.model})", [(p.spend, p.mean) for p in c.points if p.mean is not None],
                         [(p.spend, p.ci_low, p.ci_high) for p in c.points
                          if p.ci_low is not None and p.ci_high is not None])
                  for c in curves.curves if c.axis == axis]
        if series:
            out.append(line_svg(series, title=f"{curves.split} score of the checkpoint selected within the spend",
                                x_label=label, y_label=f"{curves.split} score", chart_id=f"spend-{axis}",
                                y_bounds=(0.0, 1.0)))
    return out


def write_report(
    run_dir: Path, results: RunResults, views: Mapping[str, ReportView] | None = None,
    extras: ReportExtras | None = None,
) -> tuple[Path, Path]:
    """Write results.json (RunResults.to_text) and report.html (with the sections of `views`, and `extras` from
    the store) into run_dir; return both paths."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    json_path = run_dir / RESULTS_FILE
    html_path = run_dir / REPORT_FILE
    text = results.to_text()
    page = render_html(results, views, extras)  # render before writing anything, so a failure leaves no half report
    _write_atomic(json_path, text)
    _write_atomic(html_path, page)
    return json_path, html_path


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
