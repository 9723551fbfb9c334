"""humaneval's `repair` mode: a seeded mutation of the canonical solution that makes the hidden test fail, shown to
the solver as the whole function (never the test or the bug's record), graded as in `write` mode; `write` tasks are
byte-identical to what they were before the mode existed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import evoarena.benchmarks.humaneval.benchmark as he_benchmark
from evoarena.api import ParamError
from evoarena.benchmarks.humaneval import HumanEvalBenchmark
from evoarena.benchmarks.humaneval.mutate import KINDS, mutations
from evoarena.benchmarks.humaneval.problems import problems
from evoarena.benchmarks.humaneval.repair import inject, trial_limits
from evoarena.protocol.run.runner import run_experiment
from evoarena.sandbox import SandboxLimits
from evoarena.spec import SpecError, parse_spec

HERE = Path(__file__).parent
LIMITS = trial_limits(SandboxLimits(wall_s=10.0, cpu_s=10, memory_mb=512))  # as `build` tries mutants
SIZES = {"n_train": 10, "n_val": 5, "n_test": 5}


def spec(model: str, **params: Any) -> Any:
    return parse_spec({
        "name": "he-repair",
        "benchmark": {"name": "humaneval", "params": {"n_train": 2, "n_val": 1, "n_test": 3, **params}},
        "methods": [{"name": "frozen"}],
        "models": {"scripted": {"backend": "scripted", "model": model}},
        "roles": {"solver": "scripted"},
    })


def digest(tasks: list[Any]) -> str:
    rows = [[t.id, t.split, t.source_id, t.prompt, t.reference, t.meta] for t in tasks]
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()


def test_write_mode_tasks_are_what_they_were_before_the_repair_mode() -> None:
    # computed on the code before `mode` existed (6ffd0eb)
    for seed, want in [(0, "9fe2ea8a4b847abf2d9dbed133b62e1d68ef24979e786acd9af469c2f929a6ac"),
                       (3, "0a4f2ccaff000192aca774df0b97c0b48788b8fbadb71d148438591eb29fe2f4")]:
        tasks = HumanEvalBenchmark(seed=seed, n_train=3, n_val=2, n_test=2).build()
        assert digest(tasks) == want
        assert digest(HumanEvalBenchmark(seed=seed, mode="write", n_train=3, n_val=2, n_test=2).build()) == want
    bench = HumanEvalBenchmark(n_train=3, n_val=2, n_test=2)
    assert "mode" not in bench.info()


def test_every_operator_is_spliced_into_the_original_text() -> None:
    prompt = 'def f(x, y, z):\n    """Doc: x < 1."""\n'
    solution = "    if not (y or z) and x <= 1:\n        return x - 2\n    return y + z\n"
    found = mutations(prompt, solution)
    assert {m.kind for m in found} == set(KINDS)
    assert all(m.function.startswith(prompt) for m in found)  # the signature and docstring are never mutated
    bodies = {m.function[len(prompt):] for m in found}
    assert "    if (y or z) and x <= 1:\n        return x - 2\n    return y + z\n" in bodies  # parenthesised
    assert "    if not (y and z) and x <= 1:\n        return x - 2\n    return y + z\n" in bodies
    assert "    if not (y or z) and x < 1:\n        return x - 2\n    return y + z\n" in bodies
    assert "    if not (y or z) and x <= 1:\n        return 2 - x\n    return y + z\n" in bodies
    assert "    if not (y or z) and x <= 1:\n        return x - 2\n    return y + z\n" not in bodies
    line = next(m for m in found if m.change == "+ to -")
    assert (line.kind, line.line) == ("arith", 5)


def test_the_bug_is_seeded_per_problem() -> None:
    picked = [problems()[i] for i in (0, 12, 40, 95)]
    by_seed = {seed: [inject(p, seed, LIMITS) for p in picked] for seed in (0, 1, 2)}
    assert by_seed[0] == [inject(p, 0, LIMITS) for p in picked]  # the same seed, the same bugs
    assert all(m is not None for ms in by_seed.values() for m in ms)
    assert by_seed[0][0] != by_seed[1][0]  # another seed, another bug for some problem (here HumanEval/0)
    bench = HumanEvalBenchmark(mode="repair", seed=0, **SIZES).build()
    assert digest(bench) == digest(HumanEvalBenchmark(mode="repair", seed=0, **SIZES).build())


@pytest.mark.timeout(300)
def test_every_repair_task_is_a_real_repair_and_shows_no_test() -> None:
    bench = HumanEvalBenchmark(mode="repair", seed=0, **SIZES)
    tasks = bench.build()
    assert [sum(t.split == s for t in tasks) for s in ("train", "val", "test")] == [10, 5, 5]
    by_id = {p.task_id: p for p in problems()}
    for task in tasks:
        prob, bug = by_id[task.source_id], task.meta["bug"]
        assert bug["kind"] in KINDS and task.meta["mode"] == "repair"
        fence = task.prompt.split("```python\n", 1)[1].rsplit("```", 1)[0]
        original = (prob.prompt + prob.canonical_solution).splitlines()
        shown = fence.splitlines()
        assert fence.startswith(prob.prompt) and shown != original
        assert next(i for i, (a, b) in enumerate(zip(shown, original, strict=False), 1) if a != b) == bug["line"]
        asserts = [ln.strip() for ln in prob.test.splitlines() if ln.strip().startswith("assert")]
        assert "def check(candidate)" not in task.prompt and not any(a in task.prompt for a in asserts)
        assert bug["change"] not in task.prompt.split("```")[0] and "docstring is the specification" in task.prompt
        buggy = bench.grade(task, bench.parse(task.prompt).answer)
        assert not buggy.passed and not buggy.message.startswith("Timed out")
        assert "candidate(" not in buggy.message
        assert bench.grade(task, bench.parse(task.reference).answer).passed


def test_a_bad_mode_and_a_split_too_large_for_repair_are_refused_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SpecError) as err:
        run_experiment(spec("echo", mode="fix"), tmp_path / "run")
    assert str(err.value) == "benchmark.params (humaneval).mode: 'fix' is not one of write, repair"
    assert not (tmp_path / "run").exists()
    with pytest.raises(ParamError, match=r"^benchmark.params \(humaneval\).mode: 'fix' is not one of write, repair$"):
        HumanEvalBenchmark(mode="fix")
    unbroken = iter(range(164))
    monkeypatch.setattr(he_benchmark, "inject", lambda prob, seed, limits: None if next(unbroken) >= 3 else
                        inject(prob, seed, limits))
    with pytest.raises(ParamError) as refused:
        HumanEvalBenchmark(mode="repair", n_train=2, n_val=1, n_test=1).build()
    assert str(refused.value) == ("benchmark.params.n_train/n_val/n_test: in repair mode at most 3 problems can be "
                                  "given an injected bug (seed 0), got 4 in all")


@pytest.mark.parametrize(("model", "mean"), [("he_players:fenced", 1.0), ("echo", 0.0)])
def test_a_run_passes_the_repaired_function_and_fails_the_unrepaired(tmp_path: Path, model: str, mean: float) \
        -> None:
    results: dict[str, Any] = run_experiment(spec(model, mode="repair"), tmp_path / "run", search=(HERE,))
    test = results["conditions"][0]["test"]
    assert (test["n_graded"], test["n_errors"], test["mean"]) == (3, 0, mean)
