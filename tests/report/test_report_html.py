from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
from report_samples import make_budgets, make_calls, make_meta, make_scores

from evoarena.report import ScoreRecord, build_results, render_html, write_report
from evoarena.report.chart import accuracy_svg
from evoarena.report.labels import MECHANISM_LABEL, evidence_label
from evoarena.report.results_record import ConditionResult, SplitSummary

BANNER = "evidence: mechanism — scripted model, not a language-model result"


def _results(evidence: str = "mechanism", **extra: object) -> dict:
    return build_results(make_meta(evidence, **extra), make_scores(), make_calls(), make_budgets())


def test_mechanism_banner_present() -> None:
    page = render_html(_results("mechanism"))
    assert BANNER in page
    assert 'class="banner mechanism"' in page


def test_scaled_has_no_mechanism_text() -> None:
    page = render_html(_results("scaled"))
    assert "scripted model, not a language-model result" not in page
    assert "evidence: scaled" in page


def test_self_contained_with_inline_chart() -> None:
    page = render_html(_results())
    assert "http://" not in page and "https://" not in page
    match = re.search(r'<figure class="chart">(<svg .*?</svg>)</figure>', page, re.S)
    assert match is not None
    ET.fromstring(match.group(1))
    assert "<link" not in page and "<script" not in page and "<img" not in page


def test_header_and_tables() -> None:
    page = render_html(_results())
    for text in ("run-001", "deadbeef" * 8, "0.1.0+abc", "reflexion", "frozen", "solver", "reflector"):
        assert text in page
    for table_id in ("results", "calls", "phases", "budgets", "seeds"):
        assert f'<table id="{table_id}">' in page


def test_text_is_escaped() -> None:
    scores = [ScoreRecord("<script>alert(1)</script>", "m&m", 0, "test", "a", 1.0)]
    page = render_html(build_results(make_meta(note="<b>bold</b>"), scores, [], []))
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "m&amp;m" in page
    assert "<b>bold</b>" not in page


def test_empty_results_still_render() -> None:
    page = render_html(build_results(make_meta("replication"), [], [], []))
    assert "no graded test tasks</text></svg>" in page
    assert "evidence: replication" in page


def test_plot_label() -> None:
    assert evidence_label("mechanism") == MECHANISM_LABEL == BANNER
    assert evidence_label("scaled") == "evidence: scaled"
    svg = str(accuracy_svg(_results()))
    assert svg.startswith("<svg ") and svg.endswith("</svg>")
    ET.fromstring(svg)  # well-formed XML, so browsers draw it inline


def test_chart_draws_each_cell_with_its_interval() -> None:
    """One bar per (condition, model) with a test mean, its height and whisker from the results, labels escaped."""
    def row(condition: str, model: str, test: tuple[float, float | None, float | None] | None) -> ConditionResult:
        split = None if test is None else SplitSummary(
            mean=test[0], ci_low=test[1], ci_high=test[2], n_tasks=1, n_graded=1, n_errors=0, n_seeds=1,
            per_seed=[], seed_ci=None, pass_rate=None)
        return ConditionResult(condition=condition, model=model, test=split, val=None)

    results = _results("scaled").model_copy(update={"conditions": [
        row("frozen", "m<1>", (0.5, 0.25, 0.75)), row("ace", "m<1>", (1.0, None, None)),
        row("ace", "other", (0.0, 0.0, 0.0)), row("gepa", "other", None),
    ]})
    root = ET.fromstring(str(accuracy_svg(results)))
    ns = ""
    bars = [r for r in root.iter(f"{ns}rect") if r.find(f"{ns}title") is not None]
    tips = sorted(r.find(f"{ns}title").text for r in bars)  # type: ignore[union-attr]
    assert tips == ["ace · m<1>: 1.000 [1.000, 1.000]", "ace · other: 0.000 [0.000, 0.000]",
                    "frozen · m<1>: 0.500 [0.250, 0.750]"]
    heights = {r.find(f"{ns}title").text.split(":")[0]: float(r.get("height")) for r in bars}  # type: ignore[union-attr,arg-type]
    assert heights["ace · m<1>"] == pytest.approx(2 * heights["frozen · m<1>"], abs=0.2)
    assert heights["ace · other"] == 0.0
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "evidence: scaled" in texts and "gepa" not in texts


def test_write_report(tmp_path) -> None:
    results = _results()
    json_path, html_path = write_report(tmp_path / "run", results)
    assert json_path == tmp_path / "run" / "results.json"
    assert html_path == tmp_path / "run" / "report.html"
    text = json_path.read_text(encoding="utf-8")
    assert json.loads(text) == results.model_dump()
    assert text == json.dumps(results.model_dump(), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert BANNER in html_path.read_text(encoding="utf-8")
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["report.html", "results.json"]
