"""The SkillProx views (results.json `views.skillprox`) of a tiny scripted sheets run equal what the graded versions'
harness files hold, and report.html shows their tables with the evidence label (evidence: mechanism)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evoarena.harness import load_tree
from evoarena.methods.skillprox.common import ITERATIONS, PROX, STATE
from evoarena.methods.skillprox.report_view import SkillProxView
from evoarena.methods.skillprox.skill import char_stats, size, skill_of
from evoarena.methods.skillprox.views import reason_category
from evoarena.protocol.run.runner import run_experiment
from evoarena.report import render_html
from evoarena.report.plots import MECHANISM_LABEL
from evoarena.report.results_record import RunResults
from evoarena.spec import parse_spec
from evoarena.store import RunStore

ROLES = ("solver", "diagnoser", "patcher", "shrinker")
SPEC = {
    "name": "skillprox-views",
    # train: scan, running total, scan, running total; val: scan, running total (restarting), scan; test: 2
    "benchmark": {"name": "sheets", "params": {"seed": 0, "tasks": 9, "ratio": [4, 3, 2],
                                               "families": ["seq_scan", "running_total"]}},
    "methods": [{"name": "frozen"},
                {"name": "skillprox", "label": "G1", "params": {"forward": "open", "prox": False, "iterations": 2}},
                {"name": "skillprox", "label": "G3D", "params": {"iterations": 2}}],
    "models": {"s": {"backend": "scripted", "model": "sheets-student", "max_retries": 0}},
    "roles": {r: "s" for r in ROLES},
    "gen": {"patcher": {"max_tokens": 4096}, "shrinker": {"max_tokens": 4096}},
    "protocol": {"workers": 2, "select": "last"},
}  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], RunStore]]:
    root = tmp_path_factory.mktemp("skillprox-views")
    with pytest.MonkeyPatch.context() as mp:  # a response cache of its own (the autouse fixture is per test)
        mp.setenv("EVOARENA_CACHE_DIR", str(root / "cache"))
        results = run_experiment(parse_spec(SPEC), root / "run")
    yield results, RunStore(root / "run")


def _cells(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["condition"]: c for c in results["views"]["skillprox"]["cells"]}


def _tree(store: RunStore, condition: str) -> dict[str, str]:
    cell = next(c for c in store.cells() if c["condition"] == condition)
    return load_tree(store, cell["selected_version"])


def test_view_numbers_equal_the_harness_files(run: tuple[dict[str, Any], RunStore]) -> None:
    results, store = run
    view = results["views"]["skillprox"]
    assert [c["condition"] for c in view["cells"]] == ["G1", "G3D"]  # spec order; frozen is a baseline
    assert [b["condition"] for b in view["baselines"]] == ["frozen"]
    conditions = {c["condition"]: c for c in results["conditions"]}
    for name, cell in _cells(results).items():
        tree = _tree(store, name)
        skill = skill_of(tree)
        state = json.loads(tree[STATE])
        assert state["phase"] == "done"
        assert cell["final_chars"] == char_stats(skill) and cell["G"] == size(skill)
        fwd = state["forward_end"]
        assert cell["forward"]["accepted_share"] == pytest.approx(fwd["accepted_share"], abs=1e-6)
        assert cell["forward"]["writes_per_diagnosis"] == pytest.approx(fwd["writes_per_diagnosis"], abs=1e-6)
        assert cell["forward"]["update_iterations"] == fwd["update_iterations"]
        cands = [c for it in _lines(tree[ITERATIONS]) for c in it["candidates"]]
        assert cell["candidates"]["proposed"] == len(cands)
        assert cell["candidates"]["by_outcome"] == dict(Counter(c["outcome"] for c in cands))
        assert [it["outcome"] for it in cell["iterations"]] == [it["outcome"] for it in _lines(tree[ITERATIONS])]
        test = conditions[name]["test"]
        assert cell["test"]["hard"]["mean"] == test["pass_rate"]["mean"]
        assert cell["test"]["cell"]["mean"] == test["mean"]


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_open_loop_commits_the_harmful_patch_and_the_closed_loop_rejects_it(
    run: tuple[dict[str, Any], RunStore],
) -> None:
    results, _ = run
    g1, g3d = _cells(results)["G1"], _cells(results)["G3D"]
    assert g1["candidates"]["by_outcome"] == {"committed": 1, "malformed": 1}
    assert g1["candidates"]["by_reason"] == {"malformed: the patch changes nothing": 1}
    assert [it["H_after"] for it in g1["iterations"]] == [None, 0.0]  # committed without re-execution
    assert g1["prox"] is None and g1["audit"] is None
    assert g3d["candidates"]["by_outcome"] == {"rejected": 1, "accepted": 1}
    assert g3d["candidates"]["by_reason"] == {"rejected: cell dropped on the batch": 1}
    assert g3d["forward"]["accepted_share"] == 1.0


def test_audit_and_compression_equal_prox_json(run: tuple[dict[str, Any], RunStore]) -> None:
    results, store = run
    cell = _cells(results)["G3D"]
    prox = json.loads(_tree(store, "G3D")[PROX])
    s = prox["summary"]
    assert cell["prox"]["compression"] == pytest.approx(s["compression"], abs=1e-6) and s["compression"] > 0
    assert (cell["prox"]["G_f"], cell["prox"]["G_final"], cell["prox"]["accepted"]) == (s["G_f"], s["G_final"], 1)
    assert [a["unit"] for a in cell["audit"]] == [u["uid"] for u in prox["units"]]
    for a, u in zip(cell["audit"], prox["units"], strict=True):
        assert a["u_cell"] == pytest.approx(u["u_cell"], abs=1e-6) and a["chars"] == u["chars"]
        assert a["candidate"] == (u["uid"] in prox["order"])
    harmful = next(a for a in cell["audit"] if a["name"] == "Running values")
    assert harmful["u_cell"] < 0 and harmful["rank"] == 1 and harmful["action"] == "delete"
    assert harmful["verdict"] == "accepted" and not harmful["in_final"]
    kept = [a for a in cell["audit"] if not a["candidate"]]
    assert kept and all(a["in_final"] and a["verdict"] is None for a in kept)


def test_page_shows_the_skillprox_tables_with_the_evidence_label(run: tuple[dict[str, Any], RunStore]) -> None:
    results, store = run
    page = (store.run_dir / "report.html").read_text(encoding="utf-8")
    for table in ("summary", "forward", "iterations", "prox", "audit"):
        assert f'id="skillprox-{table}"' in page
    caption = f'<caption class="mechanism">{MECHANISM_LABEL}</caption>'
    assert page.count(caption) == 6 and 'id="changes-table"' in page  # SkillProx's five tables, the manifests' one
    assert page.count(f"({MECHANISM_LABEL})\" src=\"data:image/png;base64,") == 2  # both SkillProx plots
    assert "Running values" in page and "rejected: cell dropped on the batch" in page
    saved = json.loads((store.run_dir / "results.json").read_text(encoding="utf-8"))
    assert saved["views"]["skillprox"]["cells"] == results["views"]["skillprox"]["cells"]


def test_a_run_without_prox_renders_no_audit(run: tuple[dict[str, Any], RunStore]) -> None:
    results, _ = run
    view = {**results["views"]["skillprox"], "tradeoff_plot": None}
    view["cells"] = [c for c in view["cells"] if c["prox"] is None]
    record = RunResults.model_validate({**results, "views": {"skillprox": view}})
    page = render_html(record, {"skillprox": SkillProxView()})
    assert 'id="skillprox-summary"' in page and 'id="skillprox-audit"' not in page


def test_reason_categories() -> None:
    reason = "hard accuracy 1.00 -> 0.50, cell accuracy 1.000 -> 0.800; hard accuracy dropped; cell accuracy dropped"
    assert reason_category("rejected", reason) == "hard and cell dropped on the batch"
    assert reason_category("malformed", "breaks the skill structure: dangling pointer") == "breaks the skill structure"
    assert reason_category("not_selected", "x").startswith("passed the gate")


def test_no_skillprox_cell_means_no_view(tmp_path: Path) -> None:
    spec = {**SPEC, "methods": [{"name": "frozen"}], "benchmark": {"name": "arith", "params": {
        "seed": 0, "n_train": 2, "n_val": 1, "n_test": 2}}, "models": {"s": {"backend": "scripted",
                                                                           "model": "arith-student"}}}
    results = run_experiment(parse_spec(spec), tmp_path / "run")
    assert "skillprox" not in results.get("views", {})
