"""The `labels` benchmark (evidence: mechanism): seeded hidden rules, disjoint splits, the parse forms, grading and
its feedback, refused params, the scripted student with and without the rule, and a frozen run end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evoarena.api import ParamError, Task
from evoarena.benchmarks.labels import LabelsBenchmark
from evoarena.benchmarks.labels.generator import POOL, make_rule
from evoarena.benchmarks.labels.scripted import labels_student
from evoarena.models.base import GenParams, Message
from evoarena.protocol.catalog import build_benchmark
from evoarena.protocol.run.runner import run_experiment


def _bench(**params: Any) -> LabelsBenchmark:
    bench = build_benchmark("labels", params)
    assert isinstance(bench, LabelsBenchmark)
    return bench


def _ticket(task: Task) -> str:
    return task.prompt.splitlines()[0].removeprefix("Ticket: ")


def test_same_seed_same_tasks_and_different_seeds_different_rules() -> None:
    a, b = _bench(seed=3, n_test=20).build(), _bench(seed=3, n_test=20).build()
    assert a == b
    rules = {make_rule(seed, 4).text() for seed in range(10)}
    assert len(rules) == 10
    assert {t.prompt for t in a} != {t.prompt for t in _bench(seed=4, n_test=20).build()}


def test_splits_have_their_sizes_and_share_no_text() -> None:
    tasks = _bench(seed=1, n_train=10, n_val=5, n_test=40).build()
    by_split = {s: [t for t in tasks if t.split == s] for s in ("train", "val", "test")}
    assert [len(v) for v in by_split.values()] == [10, 5, 40]
    texts = [{_ticket(t) for t in v} for v in by_split.values()]
    assert sum(len(t) for t in texts) == 55  # all distinct, so no text on two sides
    assert len({t.source_id for t in tasks}) == 55
    assert len({t.id for t in tasks}) == 55


@pytest.mark.parametrize("k", [2, 3, 4, 6])
def test_every_reference_is_what_the_hidden_rule_gives(k: int) -> None:
    bench = _bench(seed=7, labels=k, n_test=40)
    tasks = bench.build()
    rule = bench.rule
    assert len(rule.labels) == k and set(rule.priority) == set(rule.labels)
    for task in tasks:
        assert rule.classify(_ticket(task)) == task.reference
        assert f"Labels: {', '.join(rule.labels)}" in task.prompt
    assert {t.reference for t in tasks} == set(rule.labels)
    assert any(t.meta["conflict"] for t in tasks) and any(t.meta["decoy"] for t in tasks)


def test_label_names_alone_do_not_decide() -> None:
    """Each label has two cues that fit its name and two neutral words assigned by the seed."""
    rule = make_rule(0, 5)
    for label in rule.labels:
        assert sum(c in POOL[label] for c in rule.cues[label]) == 2
    all_cues = [c for cues in rule.cues.values() for c in cues]
    assert len(all_cues) == len(set(all_cues))


def test_prompts_are_short() -> None:
    bench = _bench(seed=0, labels=6, n_test=40)
    for task in bench.build():
        words = len((bench.system_prompt() + bench.format_task(task.view())).split())
        assert words < 70, task.prompt


def test_parse_accepts_the_listed_forms_and_refuses_others() -> None:
    bench = _bench(seed=0)
    label = bench.rule.labels[1]
    for text in (label, f" {label.lower()}.", f"**{label.upper()}**", f"Label: {label}", f"label:{label.lower()}",
                 f"The ticket is about a thing.\n\n{label}\n", f"Thinking...\nLabel: '{label}'"):
        assert bench.parse(text).answer == label, text
    for text in ("", "   ", "Weather", f"The answer is {label}.", f"Label: Weather\n{label}",
                 f"Labels: {', '.join(bench.rule.labels)}"):
        parsed = bench.parse(text)
        assert parsed.answer is None and parsed.error, text
        assert "expected one of" in parsed.error
    assert "'Label:' is followed by 'Weather'" in str(bench.parse("Label: Weather").error)


def test_grading_and_feedback() -> None:
    bench = _bench(seed=0, n_train=2, n_val=1, n_test=1)
    tasks = bench.build()
    train, test = tasks[0], tasks[-1]
    wrong = next(x for x in bench.rule.labels if x != train.reference)
    assert bench.grade(train, train.reference) == bench.grade(train, train.reference)
    ok = bench.grade(train, train.reference)
    assert (ok.score, ok.passed) == (1.0, True)
    bad = bench.grade(train, wrong)
    assert (bad.score, bad.passed) == (0.0, False)
    assert f"expected label is {train.reference}" in bad.message and wrong in bad.message
    assert f"expected label is {train.reference}" in bench.grade(train, None).message
    assert test.split == "test" and test.reference not in bench.grade(test, None).message.replace("No ", "")
    assert "expected" not in bench.grade(test, next(x for x in bench.rule.labels if x != test.reference)).message


@pytest.mark.parametrize(("params", "message"), [
    ({"n_train": -1}, "benchmark.params (labels).n_train: must be at least 0 (got -1)"),
    ({"n_test": 0}, "benchmark.params (labels).n_test: must be at least 1"),
    ({"labels": 1}, "benchmark.params (labels).labels: must be at least 2 (got 1)"),
    ({"labels": 7}, "benchmark.params (labels).labels: must be at most 6"),
    ({"conflict": 1.5}, "benchmark.params (labels).conflict: must be at most 1 (got 1.5)"),
    ({"decoy": -0.1}, "benchmark.params (labels).decoy"),
    ({"classes": 4}, "benchmark.params (labels): unknown param 'classes'"),
])
def test_bad_params_are_refused_in_one_line(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ParamError) as err:
        LabelsBenchmark.check_params(params)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def _student_accuracy(bench: LabelsBenchmark, tasks: list[Task], system: str) -> float:
    right = 0
    for task in tasks:
        messages = [Message("system", system), Message("user", bench.format_task(task.view()))]
        right += bench.parse(labels_student(messages, GenParams())).answer == task.reference
    return right / len(tasks)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scripted_student_needs_the_rule(seed: int) -> None:
    bench = _bench(seed=seed, n_test=40)
    tasks = bench.build()
    bare = _student_accuracy(bench, tasks, bench.system_prompt())
    ruled = _student_accuracy(bench, tasks, bench.system_prompt() + "\n" + bench.rule.text())
    assert bare <= 0.4
    assert ruled == 1.0
    cues_only = bench.rule.text().rsplit("Priority:", 1)[0]  # without the priority, conflicts go wrong
    assert _student_accuracy(bench, tasks, cues_only) < 1.0


def test_frozen_run_end_to_end(tmp_path: Path, make_spec: Any) -> None:
    spec = make_spec(benchmark={"name": "labels", "params": {"seed": 0, "n_train": 4, "n_val": 3, "n_test": 8}},
                     methods=[{"name": "frozen"}],
                     models={"scripted": {"backend": "scripted", "model": "labels-student"}},
                     roles={"solver": "scripted"})
    results = run_experiment(spec, tmp_path / "run", probe=False)
    test = results["conditions"][0]["test"]
    assert results["evidence"] == "mechanism"
    assert (test["n_graded"], test["n_errors"]) == (8, 0)
