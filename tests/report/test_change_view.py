"""The `changes` view end to end: a scripted arith run over two epochs (so every train task is attempted again)
writes `views.changes` and its report.html table; with one epoch the step-task predictions stay unmeasured."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evoarena.protocol.run.reporting import rebuild_report
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import parse_spec
from evoarena.store import RunStore


def _spec(epochs: int) -> dict[str, Any]:
    return {
        "name": f"changes-e{epochs}",
        "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 12, "n_val": 4, "n_test": 4,
                                                  "families": ["small_sum", "small_sum", "add", "mul"]}},
        # one trial: the reflection is a prediction; two trials: the retrial shows it working inside the step
        "methods": [{"name": "frozen"}, {"name": "reflexion", "label": "reflexion-1", "params": {"max_trials": 1}},
                    {"name": "reflexion", "params": {"max_trials": 2}}],
        "models": {"s": {"backend": "scripted", "model": "arith-student", "max_retries": 0}},
        "roles": {"solver": "s", "reflector": "s"},
        "protocol": {"epochs": epochs, "workers": 2},
    }


def _run(root: Path, epochs: int) -> tuple[dict[str, Any], Path]:
    with pytest.MonkeyPatch.context() as mp:  # a response cache of its own (the autouse fixture is per test)
        mp.setenv("EVOARENA_CACHE_DIR", str(root / "cache"))
        return run_experiment(parse_spec(_spec(epochs)), root / "run"), root / "run"


@pytest.fixture(scope="module")
def two_epochs(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    return _run(tmp_path_factory.mktemp("changes-e2"), 2)


def _rows(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["condition"]: c for c in results["views"]["changes"]["conditions"]}


def test_every_method_that_writes_manifests_gets_the_figures(two_epochs: tuple[dict[str, Any], Path]) -> None:
    results, _ = two_epochs
    rows = _rows(results)
    assert list(rows) == ["reflexion", "reflexion-1"]  # the order of results["conditions"]; frozen changes nothing
    for row in rows.values():
        assert row["predicted"]["changes"] + row["in_step"]["changes"] == row["changes"]
        assert row["predictions"] == row["predicting"] == row["changes"]  # reflexion names its step's task
        assert row["flipped"] + row["regressed"] <= row["windows"]
        for pool in ("predicted", "in_step"):
            fix = row[pool]["fix"]
            assert fix["hits"] <= min(fix["predicted"], fix["actual"])
            assert sum(row[pool]["verdicts"].values()) == row[pool]["scored"] <= row[pool]["changes"]
    one, two = rows["reflexion-1"], rows["reflexion"]
    # one trial: each reflection was written after a failure and judged on the task's attempt in epoch 2
    assert one["measured_in_step"] == 0 and one["unmeasured"] == 0 and one["predicted"]["scored"] == one["changes"] > 0
    assert one["predicted"]["verdicts"] == {"EFFECTIVE": one["changes"]}  # the scripted student learns from them
    assert one["predicted"]["fix"]["precision"] == 1.0 and one["windows"] > one["changes"]
    # two trials: the retrial in the same step passed, so the manifests restate a measurement
    assert two["measured_in_step"] == two["in_step"]["changes"] == two["changes"] > 0
    assert two["predicted"]["fix"]["predicted"] == 0


def test_the_section_is_on_the_page_and_rebuilt_from_the_store(two_epochs: tuple[dict[str, Any], Path]) -> None:
    results, run_dir = two_epochs
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    assert '<table id="changes-table">' in page and "<td class=\"l\">reflexion-1</td>" in page
    assert json.loads((run_dir / "results.json").read_text(encoding="utf-8"))["views"]["changes"] == \
        results["views"]["changes"]
    assert rebuild_report(RunStore.open_existing(run_dir)).views_data()["changes"] == results["views"]["changes"]


def test_with_one_epoch_the_step_task_predictions_are_unmeasured(tmp_path: Path) -> None:
    results, _ = _run(tmp_path, 1)
    one = _rows(results)["reflexion-1"]
    assert one["predictions"] > 0 and one["unmeasured"] == one["predictions"]
    assert one["predicted"]["scored"] == 0 and one["predicted"]["fix"]["precision"] is None
