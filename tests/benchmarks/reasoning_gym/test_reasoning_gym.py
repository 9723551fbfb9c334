"""The reasoning_gym benchmark on the real reasoning-gym package: seeded tasks of any dataset by name and config, its
own score_answer as the grader, feedback that names no reference unless `reveal`, and bad names refused before a run
writes anything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from evoarena.benchmarks.reasoning_gym import ReasoningGymBenchmark
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import SpecError, parse_spec
from evoarena.store import RunStore
from evoarena.store.calls import conversation, find_calls

HERE = Path(__file__).parent
SMALL = {"max_terms": 3, "max_digits": 2}


def spec_for(player: str, *, methods: list[dict[str, Any]] | None = None, **params: Any) -> Any:
    return parse_spec({
        "name": "rg",
        "benchmark": {"name": "reasoning_gym", "params": {"dataset": "basic_arithmetic", "config": SMALL,
                                                          "n_train": 2, "n_val": 2, "n_test": 6, **params}},
        "methods": methods or [{"name": "frozen"}],
        "models": {"scripted": {"backend": "scripted", "model": f"rg_players:{player}"}},
        "roles": {"solver": "scripted", "reflector": "scripted"},
    })


def run(spec: Any, where: Path) -> dict[str, Any]:
    results: dict[str, Any] = run_experiment(spec, where, search=(HERE,))
    return results


def test_tasks_are_the_datasets_own_seeded_and_configured() -> None:
    bench = ReasoningGymBenchmark(dataset="basic_arithmetic", config={"max_terms": 2, "max_digits": 1}, n_train=3,
                                  n_val=2, n_test=5)
    tasks = bench.build()
    assert [t.split for t in tasks] == ["train"] * 3 + ["val"] * 2 + ["test"] * 5
    import reasoning_gym

    own = reasoning_gym.create_dataset("basic_arithmetic", max_terms=2, max_digits=1, seed=0, size=10)
    assert [t.prompt for t in tasks] == [own[i]["question"] for i in (t.meta["index"] for t in tasks)]
    assert all(len(t.prompt.split()) <= 6 for t in tasks)  # "Calculate a op b." at most two one-digit terms
    again = ReasoningGymBenchmark(dataset="basic_arithmetic", config={"max_terms": 2, "max_digits": 1}, n_train=3,
                                  n_val=2, n_test=5).build()
    other = ReasoningGymBenchmark(dataset="basic_arithmetic", config={"max_terms": 2, "max_digits": 1}, n_train=3,
                                  n_val=2, n_test=5, seed=1).build()
    assert [t.prompt for t in again] == [t.prompt for t in tasks] != [t.prompt for t in other]
    assert len({t.prompt for t in tasks}) == len(tasks) and len({t.source_id for t in tasks}) == len(tasks)


def test_repeated_questions_are_skipped_so_none_straddles_the_split() -> None:
    # one-digit sums of two terms repeat soon: 30 distinct ones need more draws than tasks
    bench = ReasoningGymBenchmark(dataset="chain_sum", config={"min_terms": 2, "max_terms": 2, "max_digits": 1},
                                  n_train=10, n_val=10, n_test=10)
    tasks = bench.build()
    assert len({t.prompt for t in tasks}) == 30
    assert bench.info()["duplicates_skipped"] > 0


def test_grading_is_the_datasets_score_answer() -> None:
    bench = ReasoningGymBenchmark(dataset="basic_arithmetic", config=SMALL, n_train=1, n_val=1, n_test=1)
    task = bench.build()[0]
    assert bench.parse(f"so <answer> {task.reference} </answer>").answer == task.reference
    assert bench.grade(task, task.reference).passed
    off = str(int(task.reference) + 1)
    wrong = bench.grade(task, off)
    assert (wrong.score, wrong.passed) == (0.0, False) and wrong.message == f"The answer {off!r} is not correct."
    missing = bench.grade(task, bench.parse(f"The answer is {task.reference}").answer)
    assert missing.message == "No <answer>…</answer> was found in the output."
    # the default score_answer's partial credit: the reference inside a longer answer
    partial = bench.grade(task, f"{task.reference} ok")
    assert 0.0 < partial.score < 1.0 and not partial.passed and "partial score" in partial.message
    lenient = ReasoningGymBenchmark(dataset="basic_arithmetic", config=SMALL, n_train=1, n_val=1, n_test=1,
                                    pass_threshold=0.1)
    assert lenient.grade(lenient.build()[0], f"{task.reference} ok").passed


@pytest.mark.parametrize(("player", "mean"), [("right", 1.0), ("wrong", 0.0)])
def test_a_run_scores_what_the_player_says(tmp_path: Path, player: str, mean: float) -> None:
    results = run(spec_for(player), tmp_path / "run")
    test = results["conditions"][0]["test"]
    assert (test["n_graded"], test["n_errors"], test["mean"]) == (6, 0, mean)
    assert results["meta"]["extra"]["benchmark"]["dataset"] == "basic_arithmetic"


def test_another_dataset_by_name(tmp_path: Path) -> None:
    results = run(spec_for("right", dataset="spell_backward", config={"max_word_len": 6}), tmp_path / "run")
    assert results["conditions"][0]["test"]["mean"] == 1.0


def test_parse_modes_of_the_files_benchmark(tmp_path: Path) -> None:
    assert run(spec_for("line", parse="answer"), tmp_path / "a")["conditions"][0]["test"]["mean"] == 1.0
    assert run(spec_for("line"), tmp_path / "b")["conditions"][0]["test"]["mean"] == 0.0  # no tags, default `tag`


def test_reflexion_learns_the_answer_format_from_the_feedback(tmp_path: Path) -> None:
    spec = spec_for("learner", methods=[{"name": "frozen"}, {"name": "reflexion", "params": {"max_trials": 1}}])
    results = run(spec, tmp_path / "run")
    means = {c["condition"]: c["test"]["mean"] for c in results["conditions"]}
    assert means == {"frozen": 0.0, "reflexion": 1.0}
    store = RunStore(tmp_path / "run")
    asked = find_calls(store, role="reflector", limit=1)
    shown = conversation(store, asked[0].id)
    assert shown is not None and shown.messages is not None
    assert "No <answer>…</answer> was found in the output." in shown.messages[-1].content


def test_reveal_names_the_reference_in_practice_feedback(tmp_path: Path) -> None:
    bench = ReasoningGymBenchmark(dataset="basic_arithmetic", config=SMALL, n_train=1, n_val=1, n_test=1,
                                  reveal=True)
    task = bench.build()[0]
    assert bench.grade(task, "nonsense").message.endswith(f"A correct answer is {task.reference!r}.")


@pytest.mark.parametrize(("params", "message"), [
    ({"dataset": "basic_arithmetc"}, "benchmark.params.dataset: unknown reasoning_gym dataset 'basic_arithmetc' "
                                     "— did you mean 'basic_arithmetic"),
    ({"config": {"max_digit": 2}}, "benchmark.params.config.max_digit: not a field of basic_arithmetic's config "
                                   "— did you mean 'max_digits"),
    ({"config": {"size": 9}}, "benchmark.params.config.size: set by the benchmark"),
    ({"config": {"min_terms": 5, "max_terms": 2}}, "benchmark.params.config: basic_arithmetic refuses this config"),
    ({"parse": "tags"}, "benchmark.params (reasoning_gym).parse: 'tags' is not one of tag, answer, last_line, "
                        "first_line, full — did you mean 'tag'?"),
    ({"n_tset": 3}, "benchmark.params (reasoning_gym): unknown param 'n_tset' — did you mean 'n_test'?"),
])
def test_a_bad_spec_is_refused_before_anything_is_written(tmp_path: Path, params: dict[str, Any],
                                                          message: str) -> None:
    with pytest.raises(SpecError) as err:
        run(spec_for("right", **params), tmp_path / "run")
    assert str(err.value).startswith(message) and "\n" not in str(err.value)
    assert not (tmp_path / "run").exists()


def test_evoarena_run_refuses_an_unknown_dataset_in_one_line(tmp_path: Path) -> None:
    data = spec_for("right").model_dump(mode="json")
    data["benchmark"]["params"]["dataset"] = "leg_countin"
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(data))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-m", "evoarena.cli", "run", "spec.yaml", "--run-dir", "run"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2 and not (tmp_path / "run").exists()
    assert done.stderr.strip().startswith("error: benchmark.params.dataset: unknown reasoning_gym dataset "
                                          "'leg_countin' — did you mean 'leg_counting")
    assert len(done.stderr.strip().splitlines()) == 1
