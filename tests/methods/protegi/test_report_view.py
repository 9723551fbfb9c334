"""ProTeGi's report view: the binary confusion matrix read from (answer, passed) alone, its F1, and the section in a
scripted run's results.json (rounds, flips, the val pick, one binary row per cell)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evoarena.methods.protegi.report_view import confusion
from evoarena.protocol.run.runner import run_experiment


def test_confusion_reads_the_true_label_from_whether_the_answer_was_right() -> None:
    got = confusion([("A", True), ("A", True), ("A", False), ("B", True), ("B", False), (None, False)], ["A", "B"])
    # true A: 2 answered A, 1 answered B (a wrong B); true B: 1 answered A (a wrong A), 1 answered B
    assert got["matrix"] == [[2, 1], [1, 1]] and got["unparsed"] == 1 and got["n"] == 6
    assert got["f1"] == 2 * 2 / (2 * 2 + 1 + 1) and got["f1_negative"] == 2 / (2 + 1 + 1)


def test_the_view_in_a_scripted_run(tmp_path: Path, make_spec: Any) -> None:
    spec = make_spec(benchmark={"name": "labels", "params": {"seed": 0, "labels": 2, "n_train": 16, "n_val": 8,
                                                             "n_test": 10}},
                     methods=[{"name": "frozen"}, {"name": "protegi", "params": {
                         "minibatch_size": 16, "eval_rounds": 2, "prompts_per_round": 3, "samples_per_eval": 4}}],
                     models={"s": {"backend": "scripted", "model": "protegi-labels"}},
                     roles={"solver": "s", "optimizer": "s"})
    run_experiment(spec, tmp_path / "run", probe=False)
    v = json.loads((tmp_path / "run" / "results.json").read_text())["views"]["protegi"]
    assert v["labels"] == ["Billing", "Shipping"]
    (cell,) = v["cells"]
    assert [r["round"] for r in cell["rounds"]] == [1, 2, 3] and cell["final"]["chosen"] and cell["flips"] == 0
    assert sorted(b["condition"] for b in v["binary"]) == ["frozen", "protegi"]
    assert all(sum(map(sum, b["matrix"])) + b["unparsed"] == b["n"] == 10 for b in v["binary"])
    arms = {a["condition"]: a for a in v["arms"]}
    assert arms["frozen"]["proposed"] == 0 and arms["frozen"]["feedback_tokens"] == 0
    assert arms["frozen"]["right_to_wrong"] is None and arms["protegi"]["right_to_wrong"] is not None
    assert arms["protegi"]["proposed"] >= arms["protegi"]["kept"] > 0 and arms["protegi"]["feedback_tokens"] > 0
    html = (tmp_path / "run" / "report.html").read_text()
    assert "protegi-binary" in html and "protegi-arms" in html
