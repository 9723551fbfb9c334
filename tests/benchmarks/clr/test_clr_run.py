"""CLR end to end under the curriculum protocol with the scripted `clr-student` (evidence: mechanism)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evoarena.api import policy
from evoarena.benchmarks.clr.certify import ORIGINAL_TITLE
from evoarena.models import GenParams, Message
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.clr.student import clr_student
from evoarena.spec import parse_spec
from evoarena.store import RunStore


def clr_spec(**over: Any) -> Any:
    data: dict[str, Any] = {
        "name": "clr-mech",
        "benchmark": {"name": "clr", "params": {"chains": 2}},
        "methods": [{"name": "frozen"}, {"name": "reflexion", "params": {"max_trials": 1}}],
        "models": {"s": {"backend": "scripted", "model": "clr-student", "max_retries": 0}},
        "roles": {"solver": "s", "reflector": "s"},
    }
    data.update(over)
    return parse_spec(data)


def test_exception_lists_pass_practice_but_stay_on_the_frozen_ladder(tmp_path: Path) -> None:
    results = run_experiment(clr_spec(), tmp_path / "run")
    assert results["evidence"] == "mechanism"
    assert results["meta"]["extra"]["benchmark"]["certified"] is False
    acc = {c["condition"]: c["test"] for c in results["conditions"]}
    # 2 chains x 4 layers; an exception list scores (5-k)/5 at layer k: mean 0.5
    assert acc["frozen"]["n_graded"] == 8 and acc["frozen"]["mean"] == 0.5
    assert acc["reflexion"]["mean"] == 0.5
    store = RunStore(tmp_path / "run")
    passed = {
        r["cell"].split("__")[0]: r["n"]
        for r in store.query("SELECT cell, SUM(passed) AS n FROM attempts WHERE phase='practice' GROUP BY cell")
    }
    assert passed["reflexion"] > passed["frozen"] == 0  # feedback lets the lister pass practice
    # per layer: at most 3 practice attempts, and a stage ends at its first pass
    rows = store.query("SELECT unit_key, passed FROM attempts WHERE phase='practice' AND cell LIKE 'reflexion%'")
    assert max(int(r["unit_key"].rsplit("/a", 1)[1]) for r in rows) <= 3


def test_curriculum_run_resumes_without_new_calls(tmp_path: Path) -> None:
    first = run_experiment(clr_spec(methods=[{"name": "frozen"}]), tmp_path / "run")
    n = len(RunStore(tmp_path / "run").query("SELECT id FROM calls"))
    again = run_experiment(clr_spec(methods=[{"name": "frozen"}]), tmp_path / "run")
    assert len(RunStore(tmp_path / "run").query("SELECT id FROM calls")) == n
    assert again["conditions"] == first["conditions"]


def test_lesson_notes_reach_the_update_step_and_layer_one_only_stops_after_layer_one(tmp_path: Path) -> None:
    from evoarena.protocol.catalog import build_benchmark

    bench = build_benchmark("clr", {"chains": 1})
    tasks = [t for t in bench.build() if t.split == "train"]
    l1, l2 = tasks[0], tasks[1]
    full = bench.update_note("clr:lesson", l1)
    assert full and "UPDATE NOTE" not in full
    assert bench.update_note("clr:lesson-neutral", l2).startswith("UPDATE NOTE")  # type: ignore[union-attr]
    assert bench.update_note("clr:convention@L1", l1) and bench.update_note("clr:convention@L1", l2) is None
    assert bench.update_note("plain text", l2) == "plain text"
    import pytest

    with pytest.raises(ValueError, match="unknown"):
        bench.update_note("clr:lessen", l1)
    spec = clr_spec(methods=[{"name": "reflexion", "label": "lesson", "params": {"update_note": "clr:lesson@L1",
                                                                               "max_trials": 1}}],
                    benchmark={"name": "clr", "params": {"chains": 1, "layers": 2}},
                    models={"s": {"backend": "scripted", "model": "clr-lesson-spy"}})
    SPY.clear()
    run_experiment(spec, tmp_path / "run")
    assert any(SPY) and not all(SPY)  # the lesson reached layer-1 reflections, and only those


SPY: list[bool] = []


@policy("clr-lesson-spy")
def lesson_spy(messages: Sequence[Message], params: GenParams) -> str:
    text = "\n".join(m.content for m in messages)
    if text.rstrip().endswith("Reflection:"):
        SPY.append(ORIGINAL_TITLE in text)
    return clr_student(messages, params)


def test_history_reference_passes_practice_from_raw_feedback_but_not_the_test(tmp_path: Path) -> None:
    results = run_experiment(clr_spec(methods=[{"name": "history"}]), tmp_path / "run")
    assert results["conditions"][0]["test"]["mean"] == 0.5  # raw feedback lists members; it does not name classes
    store = RunStore(tmp_path / "run")
    assert store.query("SELECT SUM(passed) AS n FROM attempts WHERE phase='practice'")[0]["n"] > 0


def test_results_carry_the_clr_views(tmp_path: Path) -> None:
    results = run_experiment(clr_spec(benchmark={"name": "clr", "params": {"chains": 1}}), tmp_path / "run")
    views = results["views"]["clr"]
    frozen = views["conditions"]["frozen"]
    assert frozen["layer_accuracy"] == {"1": 0.8, "2": 0.6, "3": 0.4, "4": 0.2}  # the exception-list ladder
    assert frozen["single_cell_accuracy"]["rate"] == 0.0 and frozen["single_cell_accuracy"]["n"] == 10
    assert frozen["inc_u"]["rate"] == 0.0 and frozen["exc"]["rate"] == 1.0
    assert frozen["states"]["n"] == 4 and frozen["states"]["revealed_member_share"] == 0.0  # frozen state is empty
    listed = views["conditions"]["reflexion"]["states"]
    assert listed["revealed_member_share"] > 0 and listed["names_class_share"] == 0.0  # lists members, never the class
    html = (tmp_path / "run" / "report.html").read_text()
    assert "CLR: accuracy per layer" in html and html.count("data:image/png;base64,") >= 3


def test_class_name_references() -> None:
    from evoarena.protocol.catalog import build_benchmark

    bench = build_benchmark("clr", {"chains": 1, "class_names_in_task": True})
    tasks = [t for t in bench.build() if t.split == "train"]
    layer2 = tasks[1]
    note = bench.update_note("clr:class-name", layer2)
    assert note is not None and note.count("stands for:") == 2
    assert "What the labels stand for:" in layer2.prompt and "stands for:" in layer2.prompt
    plain = [t for t in build_benchmark("clr", {"chains": 1}).build() if t.split == "train"][1]
    assert "stands for" not in plain.prompt


def test_the_three_scripted_solvers_make_the_metrics_meaningful(tmp_path: Path) -> None:
    models = {n: {"backend": "scripted", "model": p, "max_retries": 0} for n, p in
              [("lister", "clr-student"), ("knower", "clr-class-knower"), ("overgen", "clr-attribute-overgeneraliser")]}
    methods = [{"name": "frozen", "label": n, "roles": {"solver": n}} for n in models]
    spec = clr_spec(models=models, methods=methods, roles={"solver": "lister"},
                    benchmark={"name": "clr", "params": {"chains": 2}})
    views = run_experiment(spec, tmp_path / "run")["views"]["clr"]["conditions"]
    assert views["lister"]["layer_accuracy"] == {"1": 0.8, "2": 0.6, "3": 0.4, "4": 0.2}
    assert views["lister"]["inc_u"]["rate"] == 0.0
    assert set(views["knower"]["layer_accuracy"].values()) == {1.0}
    assert views["knower"]["inc_u"]["rate"] == 1.0 and views["knower"]["exc"]["rate"] == 1.0
    assert views["overgen"]["exc"]["rate"] < 0.5
