"""report.html's parts read from the store (results.json unchanged): each cell's selected harness with its diff to
the cell's initial version, the task × condition table of test scores (capped on big runs), the learning curves."""

from __future__ import annotations

import html
import re
from pathlib import Path

from markupsafe import Markup
from report_samples import make_meta

from evoarena.harness.versions import diff_trees, load_tree
from evoarena.report import ScoreRecord, build_results, render_html
from evoarena.report.snapshot import RunSnapshot
from evoarena.report.store_sections import ReportExtras, task_table
from evoarena.store import RunStore, queries
from evoarena.store.versions import cell_versions


def _table(page: str, table_id: str) -> list[list[str]]:
    block = re.search(rf'<table id="{table_id}">(.*?)</table>', page, re.S)
    assert block is not None
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row,
                                                                                    re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", block.group(1), re.S)]


def test_the_selected_harness_and_its_diff_are_in_the_report(arith_basics: Path) -> None:
    page = (arith_basics / "report.html").read_text("utf-8")
    store = RunStore(arith_basics, read_only=True)
    for c in queries.cells(store):
        section = re.search(rf'<details class="harness" id="harness-{re.escape(c.cell)}"[^>]*>(.*?)\n</details>',
                            page, re.S)
        assert section is not None, c.cell
        initial = cell_versions(store, c.cell)[0].id
        assert c.selected_version is not None and c.selected_version[:12] in section.group(1)
        diff = diff_trees(load_tree(store, initial), load_tree(store, c.selected_version), initial[:12],
                          c.selected_version[:12])
        shown = re.findall(r'<span class="[a-z]*">(.*?)</span>', section.group(1))
        assert [html.unescape(s) for s in shown] == diff.splitlines()
        if c.condition == "frozen":
            assert diff == "" and "no change" in section.group(1)
        else:  # the evolving methods changed their harness, and the report shows the lines they added
            assert diff and any(s.startswith("+") for s in shown)
        for path in load_tree(store, c.selected_version):
            assert f"<code>{html.escape(path)}</code>" in section.group(1)
    store.close()


def test_the_per_task_table_holds_the_stores_test_scores(arith_basics: Path) -> None:
    page = (arith_basics / "report.html").read_text("utf-8")
    rows = _table(page, "tasks")
    store = RunStore(arith_basics, read_only=True)
    order = RunSnapshot.load(store).conditions
    cells = sorted(queries.cells(store), key=lambda c: order.index(c.condition))
    assert rows[0] == ["task", *[c.condition for c in cells]]  # one model, one seed: a column per cell, spec order
    body = {r[0]: r[1:] for r in rows[1:]}
    for j, c in enumerate(cells):
        tests = [a for a in queries.attempt_scores(store, c.cell, c.selected_version) if a.phase == "test"]
        assert len(tests) == len(body) == 40
        for a in tests:
            assert body[a.task_id][j] == f"{a.score:.3f}"
    store.close()
    assert re.search(r'<svg id="learning-curves"', page)
    names = re.findall(r'class="series" data-series="([^"]*)"', page)  # a running mean and a val line per condition
    assert sorted(names) == sorted([c.condition for c in cells] + [f"{c.condition} val" for c in cells])


def test_the_per_task_table_is_capped() -> None:
    scores = [ScoreRecord(condition=c, model="m", seed=0, split="test", task_id=f"t{i:03d}", score=float(i % 2))
              for c in ("base", "new") for i in range(30)]
    table = task_table(scores, ["new", "base"], limit=7)
    assert table.columns == ["new", "base"] and len(table.rows) == 7 and table.total == 30
    extras = ReportExtras(harness=[], tasks=table, curves=[], curves_svg=Markup(""), step_word="s")
    page = render_html(build_results(make_meta(), scores, [], [], ["base", "new"]), extras=extras)
    assert len(_table(page, "tasks")) == 8 and "The first 7 of\n  30 tasks" in page
    assert render_html(build_results(make_meta(), scores, [], [])).count('id="tasks"') == 0  # no store: no table
