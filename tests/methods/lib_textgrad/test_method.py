"""`textgrad.TGD` under the cell (evidence: mechanism): the example's loop and revert rule, the data loader, the
cell's roles and ledger, the budget, and a library that never sees a test task."""

from __future__ import annotations

import json
import os
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import TaskView, policy
from evoarena.harness import load_tree
from evoarena.methods.lib_textgrad import method as tgd
from evoarena.methods.lib_textgrad.method import STATE, TextGradTGD, TgdState, keeps, next_batch, read_state
from evoarena.models import GenParams, Message
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import RULES, arith_student
from evoarena.store import RunStore, queries

SEED = "Solve each word problem. Reply with the final answer as a single number."


def run(tmp_path: Path, make_spec: Any, budget: dict[str, int] | None = None, **params: Any) -> RunStore:
    extra = {"budget": budget} if budget else {}
    spec = make_spec(methods=[{"name": "textgrad.TGD", "params": params}],
                     benchmark={"name": "arith", "params": {"seed": 0, "n_train": 6, "n_val": 4, "n_test": 6,
                                                            "families": ["add", "sub", "mul"]}},
                     roles={"solver": "scripted", "proposer": "scripted"}, **extra)
    run_experiment(spec, tmp_path / "run")
    return RunStore(tmp_path / "run")


def final_tree(store: RunStore) -> dict[str, str]:
    return dict(load_tree(store, store.cells()[0]["current_version"]))


def test_revert_rule_is_the_examples() -> None:
    """prompt_optimization.py `run_validation_revert`: `if val_performance < previous_performance:` revert — a tie
    keeps the new prompt."""
    assert keeps(0.5, 0.5) and keeps(0.75, 0.5)
    assert not keeps(0.25, 0.5)


def test_defaults_are_the_examples() -> None:
    """prompt_optimization.py `config()`: `--batch_size` 3, `--max_epochs` 3, `if steps == 3: break` (4 steps an
    epoch); evaluation/results/prompt_optimization/README.md runs every task with `--run_validation`; the system
    prompt's role description is the example's."""
    p = TextGradTGD.Params()
    assert (p.batch_size, p.max_epochs, p.steps_per_epoch, p.run_validation) == (3, 3, 4, True)
    assert p.role_description == ("structured system prompt to a somewhat capable language model that specifies the "
                                  "behavior and strategies for the QA task")
    assert (p.loss, p.constraints, p.gradient_memory) == ("correct", [], 0)


def test_loader_shuffles_each_epoch_and_stops_after_max_epochs() -> None:
    """textgrad.tasks.DataLoader(shuffle=True): each epoch a new permutation, consecutive `batch_size` slices; the
    example breaks after 4 steps an epoch and runs `max_epochs`."""
    train = tuple(TaskView(f"t{i}", "train", f"t{i}", f"q{i}") for i in range(14))
    state, rng = TgdState(), random.Random(0)
    epochs: list[list[str]] = []
    while (batch := next_batch(state, train, rng, 3, 3, 4)) is not None:
        if state.step == 1:
            epochs.append([])
        assert len(batch) == 3
        epochs[-1] += [t.id for t in batch]
    assert state.done and len(epochs) == 3 and all(len(e) == 12 and len(set(e)) == 12 for e in epochs)
    assert len({tuple(e) for e in epochs}) == 3  # reshuffled every epoch
    state, seen = TgdState(), []  # steps_per_epoch null: the whole split, the last batch short
    while (batch := next_batch(state, train, rng, 3, 1, None)) is not None:
        seen.append(len(batch))
    assert seen == [3, 3, 3, 3, 2]


def test_scripted_run_optimises_the_prompt_through_the_cells_roles(tmp_path: Path, make_spec: Any) -> None:
    """A scripted run: the optimizer's updates are accepted (the rules appear in system.md), every call is the
    solver's or the proposer's, the proposer's system prompts are textgrad's own, and test accuracy beats the seed.
    3–7 s when it is the session's first textgrad import (textgrad imports litellm: 2.5–6 s by load); the run ~0.3 s."""
    store = run(tmp_path, make_spec)
    tree = final_tree(store)
    assert any(rule in tree["system.md"] for rule in (RULES["sub"], RULES["mul"]))
    state = read_state(tree)
    assert state is not None and state.epoch >= 1 and len(state.validation_acc) == len(state.prompt) >= 2
    calls = queries.calls(store, cell=store.cells()[0]["cell"])
    assert {c.role for c in calls if c.phase != "probe"} == {"solver", "proposer"}
    graded = {r["call_id"] for r in store.query("SELECT call_id FROM attempts WHERE phase IN ('practice', 'rollout')")}
    assert {c.id for c in calls if c.role == "solver" and c.phase == "practice"} == graded  # every answer graded
    from textgrad.autograd.llm_backward_prompts import BACKWARD_SYSTEM_PROMPT
    from textgrad.optimizer.optimizer_prompts import OPTIMIZER_SYSTEM_PROMPT

    systems = {store.get_request(c.request_blob)[0].content for c in calls
               if c.role == "proposer" and c.phase == "practice" and c.request_blob}
    assert systems == {BACKWARD_SYSTEM_PROMPT, OPTIMIZER_SYSTEM_PROMPT.format(
        new_variable_start_tag="<IMPROVED_VARIABLE>", new_variable_end_tag="</IMPROVED_VARIABLE>")}
    test = [r["score"] for r in store.query("SELECT score FROM attempts WHERE phase='test'")]
    assert sum(test) / len(test) == 1.0
    (row,) = json.loads((tmp_path / "run" / "results.json").read_text())["views"]["textgrad"]["cells"]
    assert row["kept"] == row["steps"] >= 1 and row["val"][0] < row["val"][-1] == 1.0
    assert 'id="textgrad-steps"' in (tmp_path / "run" / "report.html").read_text()


def test_a_reverted_step_keeps_the_last_prompt(tmp_path: Path, make_spec: Any, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    """The revert restores the previous prompt and its val accuracy (run_validation_revert's `set_value` and
    `val_performance = previous_performance`): with every new prompt's val forced below, system.md never moves."""
    real = TextGradTGD._val_accuracy
    monkeypatch.setattr(TextGradTGD, "_val_accuracy",
                        lambda self, ctx, prompt: real(self, ctx, prompt) - (0.0 if prompt == SEED else 1.0))
    store = run(tmp_path, make_spec, max_epochs=1, steps_per_epoch=2)
    tree = final_tree(store)
    assert tree["system.md"].strip() == SEED
    state = read_state(tree)
    assert state is not None and state.prompt == [SEED] * 3 and len(set(state.validation_acc)) == 1
    steps = [json.loads(r["payload"]) for r in store.query("SELECT payload FROM events WHERE kind='textgrad_step'")]
    assert [s["kept"] for s in steps] == [False, False]
    (row,) = json.loads((tmp_path / "run" / "results.json").read_text())["views"]["textgrad"]["cells"]
    assert (row["steps"], row["kept"], row["reverted"]) == (2, 0, 2) and len(set(row["val"])) == 1


def test_budget_running_out_mid_optimisation_keeps_the_best_prompt(tmp_path: Path, make_spec: Any) -> None:
    """`max_calls` ends the run inside a step: the harness is the last validated prompt (the step's writes are
    rolled back with its state), and the cell still reaches its test."""
    store = run(tmp_path, make_spec, budget={"max_calls": 60})
    assert queries.count_events(store, "budget_exhausted") >= 1
    tree = final_tree(store)
    state = read_state(tree)
    assert state is not None and tree["system.md"].strip() == state.prompt[-1].strip()
    assert len(state.prompt) >= 2 and tree["system.md"].strip() != SEED  # an update was made before the budget ran out
    assert store.query("SELECT count(*) AS n FROM attempts WHERE phase='test'")[0]["n"] == 6


@policy("test-textgrad-untagged")
def untagged(messages: Sequence[Message], params: GenParams) -> str:
    """arith-student, except that its optimizer update names the new prompt without textgrad's tags."""
    reply = arith_student(messages, params)
    return reply.replace("<IMPROVED_VARIABLE>", "New prompt: ").replace("</IMPROVED_VARIABLE>", "")


def test_an_update_without_the_tags_is_a_rejected_instruction(tmp_path: Path, make_spec: Any) -> None:
    """TextualGradientDescent.step: `new_text.split(self.new_variable_tags[0])[1]` raises IndexError without the
    opening tag; here that reply is a `rejected_output` and the prompt stays."""
    spec = make_spec(methods=[{"name": "textgrad.TGD", "params": {"max_epochs": 1}}],
                     models={"s": {"backend": "scripted", "model": "test-textgrad-untagged"}},
                     roles={"solver": "s", "proposer": "s"})
    run_experiment(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    rejected = [e.payload for e in queries.events(store, ["rejected_output"])]
    assert rejected and all("New prompt: " in str(r) for r in rejected)
    (row,) = json.loads((tmp_path / "run" / "results.json").read_text())["views"]["textgrad"]["cells"]
    assert row["rejected"] == row["steps"] == len(rejected) and row["kept"] == 0
    assert final_tree(store)["system.md"].strip() == SEED


MARK = "Zorblaxquo"


def test_the_library_never_sees_a_test_task(tmp_path: Path, make_spec: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Attack test: test tasks carry a marker in their text and id; every textgrad Variable made, every prompt its
    engines are sent, every string-based loss input and every practice call in the ledger is free of it."""
    rows = [{"id": f"tr{i}", "input": q, "answer": a, "split": "train"} for i, (q, a) in enumerate([
        ("Ann has 9 pears and gives away 4 of them. How many pears does Ann have now?", "5"),
        ("There are 3 boxes with 4 cups in each. How many cups are there?", "12"),
        ("Bo has 2 hats and gets 5 more. How many hats does Bo have now?", "7")])]
    rows += [{"id": "va0", "input": "Cy has 8 pens and gives away 3 of them. How many pens does Cy have now?",
              "answer": "5", "split": "val"}]
    rows += [{"id": f"{MARK}-{i}", "input": f"{MARK} has {n} apples and gets 2 more. How many apples does "
              f"{MARK} have now?", "answer": str(n + 2), "split": "test"} for i, n in enumerate((3, 4))]
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    seen: list[str] = []
    tg = tgd.textgrad()
    init = tg.Variable.__init__

    def spy_init(self: Any, value: Any = "", *args: Any, **kwargs: Any) -> None:
        seen.append(str(value))
        init(self, value, *args, **kwargs)

    monkeypatch.setattr(tg.Variable, "__init__", spy_init)
    engines = tgd.engines

    def spy_engines(*args: Any, **kwargs: Any) -> Any:
        made = engines(*args, **kwargs)
        for engine in made:
            gen = engine.generate
            engine.generate = lambda prompt, system_prompt=None, _g=gen, **kw: (
                seen.extend([prompt, system_prompt or ""]), _g(prompt, system_prompt, **kw))[1]
        return made

    monkeypatch.setattr(tgd, "engines", spy_engines)
    spec = make_spec(methods=[{"name": "textgrad.TGD", "params": {"batch_size": 2, "max_epochs": 1}}],
                     benchmark={"name": "files", "params": {"path": str(path), "split": "split", "id": "id",
                                                            "template": "Q: {input}\nA:", "grader": "numeric"}},
                     roles={"solver": "scripted", "proposer": "scripted"})
    run_experiment(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    assert len(seen) > 20 and any("Ann has 9 pears" in s for s in seen)  # the spy saw the library's traffic
    assert not [s for s in seen if MARK in s]
    practice = [c for c in queries.calls(store) if c.phase == "practice" and c.request_blob]
    assert practice and not [c for c in practice
                             if any(MARK in m.content for m in store.get_request(c.request_blob))]
    assert store.query("SELECT count(*) AS n FROM attempts WHERE phase='test'")[0]["n"] == 2


def test_importing_textgrad_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """textgrad's `__init__` opens a JSON log file under `TEXTGRAD_LOG_DIR` (default `./logs/`); imported afresh
    through the bridge (its modules dropped for the test, litellm kept) with an empty HOME, nothing is left in the
    working directory or HOME, the variable is as it was and the logger has no handler."""
    import logging

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("TEXTGRAD_LOG_DIR", raising=False)
    tgd.textgrad()
    for name in [m for m in sys.modules if m == "textgrad" or m.startswith("textgrad.")]:
        monkeypatch.delitem(sys.modules, name)
    logger = logging.getLogger("textgrad")
    monkeypatch.setattr(logger, "handlers", [])
    fresh = tgd.textgrad()
    assert fresh is sys.modules["textgrad"] and hasattr(fresh, "TextualGradientDescent")
    assert logger.handlers == [] and not logger.propagate
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"] and not list(home.iterdir())
    assert "TEXTGRAD_LOG_DIR" not in os.environ


def test_state_file_is_the_methods() -> None:
    assert STATE == "memory/textgrad/state.json" and TextGradTGD.library == "textgrad"
    assert TextGradTGD.roles == ("solver", "proposer")
