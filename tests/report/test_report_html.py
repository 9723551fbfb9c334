from __future__ import annotations

import base64
import json
import re

from report_samples import make_budgets, make_calls, make_meta, make_scores

from evoarena.report import ScoreRecord, build_results, render_html, write_report
from evoarena.report.plots import MECHANISM_LABEL, accuracy_plot, evidence_label

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


def test_self_contained_with_embedded_png() -> None:
    page = render_html(_results())
    assert "http://" not in page and "https://" not in page
    assert '<img class="plot"' in page
    match = re.search(r'<img[^>]*src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page, re.S)
    assert match is not None
    assert base64.b64decode(match.group(1)).startswith(b"\x89PNG\r\n\x1a\n")
    assert "<link" not in page and "<script" not in page


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
    assert "data:image/png;base64," in page
    assert "evidence: replication" in page


def test_plot_label() -> None:
    assert evidence_label("mechanism") == MECHANISM_LABEL == BANNER
    assert evidence_label("scaled") == "evidence: scaled"
    png = base64.b64decode(accuracy_plot(_results()))
    assert png.startswith(b"\x89PNG")


def test_write_report(tmp_path) -> None:
    results = _results()
    json_path, html_path = write_report(tmp_path / "run", results)
    assert json_path == tmp_path / "run" / "results.json"
    assert html_path == tmp_path / "run" / "report.html"
    text = json_path.read_text(encoding="utf-8")
    assert json.loads(text) == results
    assert text == json.dumps(results, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert BANNER in html_path.read_text(encoding="utf-8")
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["report.html", "results.json"]
