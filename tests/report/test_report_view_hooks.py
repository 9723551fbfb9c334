"""Report views are hooks: a view a test registers adds its section to results.json and report.html, and the report
package names no benchmark, method or protocol (it gets every view and the method classes passed in)."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import ReportContext, ReportView, RunInfo, TemplateView, ViewPage, view
from evoarena.protocol.catalog import catalog
from evoarena.protocol.run.reporting import rebuild_report, report_views
from evoarena.protocol.run.runner import run_experiment
from evoarena.report import collect
from evoarena.report.plots import MECHANISM_LABEL
from evoarena.report.snapshot import RunSnapshot
from evoarena.spec import parse_spec
from evoarena.store import RunStore, queries

REPORT = Path(__file__).resolve().parents[2] / "src" / "evoarena" / "report"
SPEC_NAME = "view-hook"  # the test views apply to this run only (the registry is the process's)
SPEC = {
    "name": SPEC_NAME,
    "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 2, "n_val": 1, "n_test": 2}},
    "methods": [{"name": "frozen"}, {"name": "evoskill", "label": "evo"}],
    "models": {"s": {"backend": "scripted", "model": "arith-student", "max_retries": 0}},
    "roles": {"solver": "s"},
}


@view("test-hook")
class HookView:
    """A section a test registers: per cell its condition, method and the method's own reading of its state."""

    def applies(self, run: RunInfo) -> bool:
        return run.name == SPEC_NAME and "evoskill" in run.methods

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        cells = []
        for c in queries.cells(ctx.store):
            version = c.selected_version or c.current_version
            assert version is not None
            cells.append({"condition": c.condition, "method": c.method,
                          "state_keys": sorted(ctx.method_state(c.method, version))})
        return {"cells": cells, "conditions": [c.condition for c in ctx.conditions],
                "spec_methods": [m["name"] for m in ctx.spec_methods], "evidence": ctx.evidence}

    def html(self, data: Mapping[str, Any], page: ViewPage) -> str:
        return page.render(
            '<h2 id="test-hook">Hook <b>section</b></h2><table id="test-hook-table">'
            '<caption class="{{ banner_class }}">'
            "{{ evidence_caption }}</caption>{% for c in v.cells %}<tr><td>{{ c.condition }}</td><td>{{ c.method }}"
            "</td><td>{{ c.state_keys | join(', ') }}</td></tr>{% endfor %}</table><p>{{ 0.25 | pct }}</p>",
            v=data,
        )


@view("test-never")
class NeverView(TemplateView):
    """A view whose benchmark no run has: never in results.json."""

    benchmark = "no-such-benchmark"
    template = ("evoarena.report", "templates/report.html.j2")

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        raise AssertionError("a view that does not apply is never built")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    root = tmp_path_factory.mktemp("view-hook")
    with pytest.MonkeyPatch.context() as mp:  # the autouse per-test cache does not reach a module fixture
        mp.setenv("EVOARENA_CACHE_DIR", str(root / "cache"))
        results = run_experiment(parse_spec(SPEC), root / "run")
    return results, root / "run"


def test_a_registered_view_adds_its_section(run: tuple[dict[str, Any], Path]) -> None:
    results, run_dir = run
    data = results["views"]["test-hook"]
    assert set(results["views"]) == {"test-hook"}  # no CLR or SkillProx section on an arith run, nor test-never
    assert data["cells"] == [{"condition": "evo", "method": "evoskill", "state_keys": ["history", "skills"]},
                             {"condition": "frozen", "method": "frozen", "state_keys": []}]  # Method.state_view
    assert data["conditions"] == ["evo", "frozen"] and data["spec_methods"] == ["frozen", "evoskill"]
    assert data["evidence"] == "mechanism"
    saved = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    assert saved["views"]["test-hook"] == data
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert '<table id="test-hook-table">' in page and "Hook <b>section</b>" in page  # the view's own markup
    assert f'<caption class="mechanism">{MECHANISM_LABEL}</caption>' in page and "25.0%" in page  # report filters
    assert "<td>evo</td><td>evoskill</td><td>history, skills</td>" in page


def test_the_page_is_rebuilt_from_the_store(run: tuple[dict[str, Any], Path]) -> None:
    results, run_dir = run
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    again = rebuild_report(RunStore.open_existing(run_dir))
    assert again.model_dump() == results and (run_dir / "report.html").read_text(encoding="utf-8") == page


def test_the_report_gets_its_views_and_method_classes_passed_in(run: tuple[dict[str, Any], Path]) -> None:
    _, run_dir = run
    store = RunStore.open_existing(run_dir)
    assert collect.build_views(store, RunSnapshot.load(store), rebuild_report(store), {}) == {}  # no views: none
    views = report_views(catalog().entries("view"))
    assert {"clr", "skillprox", "test-hook", "test-never"} <= set(views)
    assert all(isinstance(v, ReportView) for v in views.values())
    with pytest.raises(LookupError, match="without a method resolver"):  # method_state needs the resolver
        collect.rebuild_report(store, {"test-hook": views["test-hook"]})


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
    return out


def test_report_imports_no_benchmark_method_or_protocol() -> None:
    files = sorted(REPORT.rglob("*.py"))
    assert files
    for path in files:
        for name in _imports(path):
            top = name.split(".")[:2]
            allowed = ("report", "store", "harness", "search", "spec", "codec")  # spec: the stored spec read back
            assert top[0] != "evoarena" or top[1] in allowed, f"{path.name} imports {name}"


def test_report_names_no_registered_benchmark_or_method() -> None:
    names = set(catalog().names("benchmark")) | set(catalog().names("method"))
    for path in sorted(REPORT.rglob("*.py")):
        constants = {n.value for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                     if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        assert not constants & names, f"{path.name} names {sorted(constants & names)}"
    for path in sorted(REPORT.rglob("*.j2")):
        text = path.read_text(encoding="utf-8")
        quoted = {m for m in re.findall(r"[\"'.]([a-z_]+)[\"')]", text)} & names
        assert not quoted, f"{path.name} names {sorted(quoted)}"
