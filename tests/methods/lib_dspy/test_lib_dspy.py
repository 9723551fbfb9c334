"""DSPy's optimisers under the protocol: the solver is sent what DSPy's own program sends and DSPy's parser reads the
reply; the library sees only train tasks; its program calls are the cell's graded rollouts; the budget stops it with
the program it has; DSPy is never imported by the catalog and writes nothing under HOME."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import Parsed, TaskView
from evoarena.harness import load_tree
from evoarena.methods.lib_dspy.bridge import PROGRAM, load_dspy, new_program, program_of, state_text
from evoarena.methods.lib_dspy.optimisers import BootstrapFewShot
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import parse_spec
from evoarena.store import RunStore


def spec(method: dict[str, Any], **over: Any) -> Any:
    data: dict[str, Any] = {
        "name": "dspy",
        "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 6, "n_val": 3, "n_test": 8,
                                                  "families": ["small_sum", "add", "mul"]}},
        "methods": [method],
        "models": {"scripted": {"backend": "scripted", "model": "arith-student"}},
        "roles": {"solver": "scripted"},
        "seeds": [0],
    }
    data.update(over)
    return parse_spec(data)


def sql(run: Path, query: str) -> list[Any]:
    with sqlite3.connect(run / "run.sqlite") as db:
        return db.execute(query).fetchall()


def final_tree(run: Path) -> dict[str, str]:
    """The newest harness version of the run's one cell."""
    (vid,) = sql(run, "SELECT id FROM harness_versions ORDER BY rowid DESC LIMIT 1")[0]
    return dict(load_tree(RunStore(run), vid))


def test_the_solver_gets_what_dspys_own_program_sends() -> None:
    """The messages `build_messages` sends are those DSPy's `Predict` sends its LM for the same state (recorded by a
    `dspy.BaseLM` in a plain DSPy run), and the reply is read by ChatAdapter's parser."""
    dspy = load_dspy()
    program = new_program("Predict")
    program.predictors()[0].demos = [dspy.Example(question="2 + 3 =", answer="5"),
                                     dspy.Example(question="4 + 4 =", answer="8", augmented=True)]
    program.predictors()[0].signature = program.predictors()[0].signature.with_instructions("Add them.")
    sent: list[Any] = []

    class Recorder(dspy.BaseLM):  # type: ignore[misc, name-defined]
        def forward(self, prompt: Any = None, messages: Any = None, **kw: Any) -> Any:
            from types import SimpleNamespace
            sent.append(messages)
            msg = SimpleNamespace(content="[[ ## answer ## ]]\n9\n\n[[ ## completed ## ]]", tool_calls=None)
            return SimpleNamespace(choices=[SimpleNamespace(message=msg, logprobs=None)], usage={}, model="r")

    with dspy.context(lm=Recorder(model="r", cache=False), adapter=dspy.ChatAdapter(use_json_adapter_fallback=False)):
        assert program(question="7 + 2 =").answer == "9"
    method = BootstrapFewShot()
    tree = {PROGRAM: state_text(program)}
    task = TaskView("t", "test", "t", "7 + 2 =")
    ours = [{"role": m.role, "content": m.content} for m in method.build_messages(tree, "Q: 7 + 2 =\nA:", task)]
    assert ours == sent[0]
    assert "Add them." in ours[0]["content"] and len(ours) == 6  # system, two demo pairs, the question
    assert method.read_reply(tree, "[[ ## answer ## ]]\n9\n\n[[ ## completed ## ]]") == Parsed("9")
    bad = method.read_reply(tree, "9")
    assert bad.answer is None and bad.error and bad.error.startswith("DSPy ChatAdapter")


def test_the_library_never_sees_a_test_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Attack test: a spy on DSPy's entry points (the trainset `compile` gets, every program call's inputs, every
    prompt ChatAdapter formats while compiling, every metric call) records what the library sees; no test task's id
    or question (arith's splits are disjoint by question) is ever among it, and the train questions are."""
    dspy = load_dspy()
    seen: list[str] = []
    compiling = [False]
    real_compile, real_format = dspy.BootstrapFewShot.compile, dspy.ChatAdapter.format
    real_forward = dspy.Predict.forward

    def compile_spy(self: Any, student: Any, *, teacher: Any = None, trainset: Any) -> Any:
        seen.extend(json.dumps(x.toDict()) for x in trainset)
        metric = self.metric
        self.metric = lambda ex, pred, trace=None: (seen.append(repr((ex.toDict(), dict(pred)))),
                                                    metric(ex, pred, trace))[1]
        compiling[0] = True
        try:
            return real_compile(self, student, teacher=teacher, trainset=trainset)
        finally:
            compiling[0] = False

    def format_spy(self: Any, signature: Any, demos: Any, inputs: Any) -> Any:
        out = real_format(self, signature, demos, inputs)
        if compiling[0]:
            seen.append(json.dumps(out))
        return out

    def forward_spy(self: Any, **kwargs: Any) -> Any:
        if compiling[0]:
            seen.append(repr(kwargs))
        return real_forward(self, **kwargs)

    monkeypatch.setattr(dspy.BootstrapFewShot, "compile", compile_spy)
    monkeypatch.setattr(dspy.ChatAdapter, "format", format_spy)
    monkeypatch.setattr(dspy.Predict, "forward", forward_spy)
    s = spec({"name": "dspy.BootstrapFewShot", "params": {"max_bootstrapped_demos": 2, "max_labeled_demos": 3}})
    run_experiment(s, tmp_path / "run", probe=False)
    from evoarena.benchmarks.arith.benchmark import ArithBenchmark

    tasks = ArithBenchmark(**s.benchmark.params).build()
    text = "\n".join(seen)
    assert all(t.prompt in text for t in tasks if t.split == "train")  # the spy saw the library's inputs
    leaked = [t.id for t in tasks if t.split == "test" and (t.prompt in text or t.id in text)]
    assert leaked == []


def test_program_calls_are_rollouts_and_the_program_is_the_harness(tmp_path: Path) -> None:
    """Every call of the program while compiling is a rollout (an attempt in the ledger, phase `rollout`, on a
    train task), the harness holds DSPy's dump with the demos it chose, and the run records the library (results
    meta and the `lib_dspy` report view)."""
    run_experiment(spec({"name": "dspy.BootstrapFewShot",
                         "params": {"max_bootstrapped_demos": 2, "max_labeled_demos": 3}}), tmp_path / "run",
                   probe=False)
    rows = sql(tmp_path / "run", "SELECT task_id FROM attempts WHERE phase = 'rollout'")
    assert rows and all(r[0].startswith("train-") for r in rows)
    kept = sql(tmp_path / "run", "SELECT count(*) FROM harness_versions WHERE manifest LIKE '%program state DSPy ran%'")
    assert kept[0][0] >= 2  # the teacher's states (its labeled demos minus each example), each kept as a candidate
    state = json.loads(final_tree(tmp_path / "run")[PROGRAM])
    demos = state["demos"]
    assert len(demos) == 3 and sum(bool(d.get("augmented")) for d in demos) == 2
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["meta"]["extra"]["libraries"]["dspy.BootstrapFewShot"].startswith("dspy 3.4")
    (cell,) = results["views"]["lib_dspy"]["cells"]  # the report view: the tested program and what it took
    assert cell["library"].startswith("dspy 3.4") and cell["rollouts"] == len(rows) and cell["calls"]["solver"] >= 1
    assert "lib_dspy-cells" in (tmp_path / "run" / "report.html").read_text()


def test_the_budget_stops_it_with_the_program_it_has(tmp_path: Path) -> None:
    """With `max_attempts` below the trainset, the cell refuses a rollout mid-bootstrap: the harness still holds the
    program DSPy's `_train` builds from the traces bootstrapped so far (not the empty start)."""
    run_experiment(spec({"name": "dspy.BootstrapFewShot",
                         "params": {"max_bootstrapped_demos": 4, "max_labeled_demos": 4}},
                        budget={"max_attempts": 2}), tmp_path / "run", probe=False)
    assert sql(tmp_path / "run", "SELECT count(*) FROM attempts WHERE phase = 'rollout'") == [(2,)]
    tree = final_tree(tmp_path / "run")
    demos = json.loads(tree[PROGRAM])["demos"]
    assert 1 <= sum(bool(d.get("augmented")) for d in demos) <= 2 and len(demos) == 4


def test_catalog_does_not_import_dspy_and_nothing_lands_in_home(tmp_path: Path) -> None:
    """`evoarena.protocol.catalog.catalog()` imports no dspy or litellm; a DSPy practice step under an empty HOME
    writes nothing there (its caches are off). ~6 s: two fresh interpreters (the import is what is measured)."""
    code = ("import sys, evoarena.protocol.catalog as c; c.catalog(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dspy', 'litellm', 'textgrad')))")
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    (tmp_path / "home").mkdir()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"
    run = ("import sys; from pathlib import Path; from evoarena.protocol.run.runner import run_experiment; "
           "from evoarena.spec import parse_spec; "
           "s = parse_spec({'name': 'h', 'benchmark': {'name': 'arith', 'params': {'n_train': 3, 'n_val': 2, "
           "'n_test': 2}}, 'methods': [{'name': 'dspy.BootstrapFewShot'}], 'models': {'s': {'backend': "
           "'scripted', 'model': 'arith-student'}}, 'roles': {'solver': 's'}, 'seeds': [0]}); "
           f"run_experiment(s, Path({str(tmp_path / 'run')!r}), probe=False)")
    subprocess.run([sys.executable, "-c", run], capture_output=True, text=True, env=env, check=True)
    assert list((tmp_path / "home").rglob("*")) == []
    assert PROGRAM in final_tree(tmp_path / "run")


def test_program_of_reads_the_dump_back() -> None:
    """The dump kept in the harness loads back into the same demos and instructions."""
    dspy = load_dspy()
    program = new_program("ChainOfThought")
    program.predictors()[0].demos = [dspy.Example(question="1 + 1 =", reasoning="one and one", answer="2")]
    again = program_of("ChainOfThought", {PROGRAM: state_text(program)})
    assert again.dump_state() == json.loads(state_text(program))


def test_chain_of_thought_runs_and_its_answer_field_is_read(tmp_path: Path) -> None:
    """`program: ChainOfThought`: the solver is asked for `reasoning` then `answer`; DSPy's parser reads the answer
    field, and the compiled program keeps bootstrapped demos with their reasoning."""
    run = tmp_path / "run"
    run_experiment(spec({"name": "dspy.BootstrapFewShot", "params": {"program": "ChainOfThought",
                                                                     "max_bootstrapped_demos": 2,
                                                                     "max_labeled_demos": 2}}), run, probe=False)
    demos = json.loads(final_tree(run)[PROGRAM])["predict"]["demos"]
    assert [bool(d.get("reasoning")) for d in demos if d.get("augmented")] == [True, True]
    assert sql(run, "SELECT count(*) FROM attempts WHERE phase = 'test' AND parse_error IS NOT NULL") == [(0,)]


def test_in_its_own_process_the_same_program_and_answers(tmp_path: Path) -> None:
    """`protocol.isolation: process`: DSPy runs in the method's confined process, its reader crosses the pipe
    (`ReadReply`), and the run's harness versions and test answers are those of the in-process run. ~4 s: the
    method's process imports DSPy."""
    method = {"name": "dspy.BootstrapFewShot", "params": {"max_bootstrapped_demos": 2, "max_labeled_demos": 3}}
    runs = {}
    for isolation in ("in-process", "process"):
        run = tmp_path / isolation
        run_experiment(spec(method, protocol={"isolation": isolation}), run, probe=False)
        runs[isolation] = (sql(run, "SELECT id FROM harness_versions ORDER BY id"),
                           sql(run, "SELECT task_id, answer, parse_error FROM attempts WHERE phase = 'test' "
                                    "ORDER BY task_id"))
    assert runs["process"] == runs["in-process"] and runs["process"][1]
