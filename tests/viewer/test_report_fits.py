"""report.html fits a 1024 px window in Chromium: the page never scrolls sideways; a table wider than the page (the
arith-basics run's results and changes tables are) scrolls inside its own box instead."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def test_report_tables_fit_the_page_at_1024_px(browser: Any, runs_root: Path) -> None:
    context = browser.new_context(viewport={"width": 1024, "height": 800})
    page = context.new_page()
    page.goto((runs_root / "arith-basics" / "report.html").as_uri())
    width, window = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert window == 1024 and width <= window
    boxes = page.evaluate("Array.from(document.querySelectorAll('table')).map(t => "
                          "[t.id, t.getBoundingClientRect().right, t.scrollWidth, t.clientWidth])")
    assert len(boxes) >= 5
    assert all(right <= window for _, right, _, _ in boxes), boxes
    assert any(inner > shown for _, _, inner, shown in boxes), "no table is wider than the page: the test shows nothing"
    context.close()
