"""Read a run store into report records, and (re)build results.json + report.html from it."""

from __future__ import annotations

import json
from typing import Any

from evoarena.report import CallRecord, CellBudget, RunMeta, ScoreRecord, build_results, write_report
from evoarena.store import RunStore


def _cells(store: RunStore) -> dict[str, dict[str, Any]]:
    return {c["cell"]: c for c in store.cells()}


def score_records(store: RunStore) -> list[ScoreRecord]:
    """Test scores of each cell's selected version, and that version's validation scores. A curriculum cell
    (no selection) contributes every stage's test score."""
    cells = _cells(store)
    out: list[ScoreRecord] = []
    for cell, c in cells.items():
        selected = c["selected_version"]
        if c["status"] != "done":
            continue
        if selected:
            rows = store.query(
                "SELECT phase, task_id, score, passed, error FROM attempts WHERE cell=? AND version_id=?"
                " AND phase IN ('test', 'select') ORDER BY task_id",
                [cell, selected],
            )
        else:
            rows = store.query(
                "SELECT phase, task_id, score, passed, error FROM attempts WHERE cell=? AND phase='test'"
                " ORDER BY task_id",
                [cell],
            )
        for r in rows:
            out.append(ScoreRecord(
                condition=c["condition"], model=c["model"], seed=int(c["seed"]),
                split="test" if r["phase"] == "test" else "val", task_id=r["task_id"],
                score=float(r["score"] or 0.0), error=r["error"] is not None,
                passed=None if r["passed"] is None else bool(r["passed"]),
            ))
    return out


def call_records(store: RunStore) -> list[CallRecord]:
    cells = _cells(store)
    out: list[CallRecord] = []
    for r in store.query("SELECT * FROM calls ORDER BY id"):
        c = cells.get(r["cell"] or "")
        out.append(CallRecord(
            condition=c["condition"] if c else None, model=c["model"] if c else None,
            seed=int(c["seed"]) if c else None, role=r["role"], model_id=r["model_id"],
            input_tokens=int(r["input_tokens"]), output_tokens=int(r["output_tokens"]),
            cost_usd=float(r["cost_usd"]), latency_s=float(r["latency_s"]), cached=bool(r["cached"]),
            error=r["error"], phase=r["phase"] or "",
        ))
    return out


def cell_budgets(store: RunStore) -> list[CellBudget]:
    out: list[CellBudget] = []
    for c in _cells(store).values():
        if not c["budget_json"]:
            continue
        b = json.loads(c["budget_json"])
        used = {k: int(v) for k, v in b["used"].items() if k != "exhausted_by"}
        out.append(CellBudget(condition=c["condition"], model=c["model"], seed=int(c["seed"]),
                              limits=b["limits"], used=used, exhausted=b["used"].get("exhausted_by") is not None))
    return out


def run_meta(store: RunStore) -> RunMeta:
    run = store.run()
    if run is None:
        raise FileNotFoundError(f"{store.run_dir}: the store holds no run")
    spec = json.loads(run["spec_json"])
    return RunMeta(
        run_id=run["id"], spec_name=run["name"], spec_hash=run["spec_hash"], code_version=run["code_version"],
        evidence=run["evidence"], benchmark=spec["benchmark"]["name"], test_split_hash=run["test_hash"] or "",
        isolation=run["isolation"] or "", started_at=run["started_at"], finished_at=run["finished_at"],
        extra={"rejected_outputs": _count_events(store, "rejected_output"), "benchmark": _benchmark_info(store)},
    )


def _benchmark_info(store: RunStore) -> object:
    row = store.query_one("SELECT payload FROM events WHERE kind='run_started' ORDER BY id DESC LIMIT 1")
    return json.loads(row["payload"]).get("benchmark") if row else None


def _count_events(store: RunStore, kind: str) -> int:
    row = store.query_one("SELECT COUNT(*) AS n FROM events WHERE kind=?", [kind])
    return int(row["n"]) if row else 0


def stage_diagnostics(store: RunStore) -> list[dict[str, Any]]:
    """Per graded curriculum stage: the cell's condition, the score and the benchmark's diagnostics."""
    cells = _cells(store)
    out = []
    for row in store.query("SELECT cell, key, result FROM units WHERE key LIKE 'test/%' ORDER BY cell, key"):
        result = json.loads(row["result"])
        if result.get("diagnostics") and row["cell"] in cells:
            out.append({"condition": cells[row["cell"]]["condition"], "score": result.get("score"),
                        "diagnostics": result["diagnostics"]})
    return out


def benchmark_views(store: RunStore, meta: RunMeta) -> dict[str, Any]:
    """Benchmark-specific views (today: CLR's), keyed by benchmark name; empty when there are none."""
    if meta.benchmark == "clr":
        from evoarena.benchmarks.clr.compare_views import compare_views
        from evoarena.benchmarks.clr.views import clr_views

        views = clr_views(stage_diagnostics(store), meta.evidence)
        views["compare"] = compare_views(store, views["conditions"], meta.evidence)
        return {"clr": views}
    return {}


def method_views(store: RunStore, meta: RunMeta, conditions: list[dict[str, Any]]) -> dict[str, Any]:
    """Method-specific views (today: SkillProx's), keyed by method name; empty when no cell ran such a method."""
    methods = {c["method"] for c in store.cells()}
    out: dict[str, Any] = {}
    if "skillprox" in methods:
        from evoarena.methods.skillprox.views import skillprox_views

        view = skillprox_views(store, conditions, meta.evidence)
        if view:
            out["skillprox"] = view
    return out


def rebuild_report(store: RunStore) -> dict[str, Any]:
    """Recompute results.json and report.html from the store alone."""
    meta = run_meta(store)
    results = build_results(meta, score_records(store), call_records(store), cell_budgets(store))
    views = {**benchmark_views(store, meta), **method_views(store, meta, results["conditions"])}
    if views:
        results["views"] = views
    write_report(store.run_dir, results)
    return results
