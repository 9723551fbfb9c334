"""BootstrapFewShot's demo selection with the scripted student (evidence: mechanism)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evoarena.harness import load_tree
from evoarena.methods.bootstrap_fewshot.method import DEMOS, read_demos
from evoarena.protocol.run.runner import run_experiment
from evoarena.store import RunStore


def demos_after(tmp_path: Path, make_spec: Any, epochs: int, **params: Any) -> dict[str, list[dict[str, Any]]]:
    spec = make_spec(methods=[{"name": "bootstrap_fewshot", "params": params}], protocol={"epochs": epochs},
                     benchmark={"name": "arith", "params": {"seed": 0, "n_train": 10, "n_val": 3, "n_test": 5}})
    run_experiment(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    tree = load_tree(store, store.cells()[0]["current_version"])
    assert read_demos(tree).text() == tree[DEMOS]  # the model writes the file back byte for byte
    data: dict[str, list[dict[str, Any]]] = json.loads(tree[DEMOS])
    return data


def test_bootstrapped_demos_come_from_passing_teacher_attempts(tmp_path: Path, make_spec: Any) -> None:
    demos = demos_after(tmp_path, make_spec, 1, max_bootstrapped_demos=4, max_labeled_demos=16)
    # the zero-shot scripted student only passes addition, so only addition problems bootstrap
    assert demos["bootstrapped"] and all("more" in d["question"] for d in demos["bootstrapped"])
    assert demos["labeled"] and all(d["answer"].lstrip("-").isdigit() for d in demos["labeled"])


def test_max_labeled_demos_caps_all_demos_as_in_dspy(tmp_path: Path, make_spec: Any) -> None:
    demos = demos_after(tmp_path, make_spec, 1, max_bootstrapped_demos=2, max_labeled_demos=3)
    assert len(demos["bootstrapped"]) <= 2
    assert len(demos["bootstrapped"]) + len(demos["labeled"]) == 3


def test_a_second_epoch_adds_no_duplicate_demos(tmp_path: Path, make_spec: Any) -> None:
    demos = demos_after(tmp_path, make_spec, 2, max_bootstrapped_demos=4, max_labeled_demos=16)
    ids = [d["task_id"] for d in demos["bootstrapped"] + demos["labeled"]]
    assert len(ids) == len(set(ids)) == 10
