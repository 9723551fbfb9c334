"""`textgrad.TGD` against textgrad 0.1.8 as installed and its `evaluation/prompt_optimization.py` (zou-group/textgrad
@75e912e): the same step, run once through the cell and once as the example runs it with the library alone, on the
same batch and the same deterministic scripted model, sends the same prompts and reaches the same prompt."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evoarena.harness import load_tree
from evoarena.methods.lib_textgrad import method as tgd
from evoarena.models import GenParams, Message
from evoarena.protocol.catalog import build_benchmark
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import arith_student
from evoarena.store import RunStore, queries

BENCH = {"seed": 0, "n_train": 6, "n_val": 4, "n_test": 4, "families": ["add", "sub", "mul"]}


def _first_step(tmp_path: Path, make_spec: Any) -> tuple[RunStore, str, dict[str, str]]:
    """A run of one TGD step; the store, the step's unit and the tree it left."""
    spec = make_spec(methods=[{"name": "textgrad.TGD", "params": {"max_epochs": 1, "steps_per_epoch": 1}}],
                     benchmark={"name": "arith", "params": BENCH}, roles={"solver": "scripted", "proposer": "scripted"})
    run_experiment(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    cell = store.cells()[0]["cell"]
    unit = sorted(k for k in queries.unit_keys(store, cell) if k.startswith("practice/"))[0]
    return store, unit, dict(load_tree(store, store.cells()[0]["current_version"]))


def _library_step(prompt: str, batch: Sequence[tuple[str, str]]) -> tuple[list[tuple[str, str]], str]:
    """The example's training step with textgrad alone (its engines answering with the same scripted policy): the
    (system, user) of every backward/optimizer request, and the optimised prompt."""
    tg = tgd.textgrad()
    from textgrad.autograd.string_based_ops import StringBasedFunction
    from textgrad.tasks.big_bench_hard import string_based_equality_fn

    sent: list[tuple[str, str]] = []

    class Scripted(tg.EngineLM):  # type: ignore[name-defined]
        model_string = "scripted"

        def __init__(self, record: bool) -> None:
            self.record = record

        def generate(self, prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
            if self.record:
                sent.append((system_prompt or "", prompt))
            return arith_student([Message("system", system_prompt or ""), Message("user", prompt)], GenParams())

        def __call__(self, prompt: str, **kwargs: Any) -> str:
            return self.generate(prompt, **kwargs)

    llm_api_test, llm_api_eval = Scripted(False), Scripted(True)
    fn_purpose = "The runtime of string-based function that checks if the prediction is correct."
    eval_fn = StringBasedFunction(string_based_equality_fn, function_purpose=fn_purpose)
    system_prompt = tg.Variable(prompt, requires_grad=True, role_description=(
        "structured system prompt to a somewhat capable language model that specifies the behavior and strategies "
        "for the QA task"))
    model = tg.BlackboxLLM(llm_api_test, system_prompt)
    optimizer = tg.TextualGradientDescent(engine=llm_api_eval, parameters=[system_prompt])
    optimizer.zero_grad()
    losses = []
    for x, y in batch:
        x = tg.Variable(x, requires_grad=False, role_description="query to the language model")
        y = tg.Variable(y, requires_grad=False, role_description="correct answer for the query")
        response = model(x)
        losses.append(eval_fn(inputs=dict(prediction=response, ground_truth_answer=y)))
    total_loss = tg.sum(losses)
    total_loss.backward(llm_api_eval)
    optimizer.step()
    return sent, system_prompt.value


def _chunks(update: str) -> tuple[str, Counter[str]]:
    """An optimizer prompt as its frame and the multiset of its per-example context chunks (textgrad orders the
    gradients by a set and joins them with newlines, so only their multiset is the library's)."""
    head, rest = update.split("<CONTEXT>", 1)
    body, tail = rest.split("</CONTEXT>", 1)
    parts = re.split(r"(?=Here is a conversation:\n\n<CONVERSATION>)", body)
    return head + "<CONTEXT></CONTEXT>" + tail, Counter(p.strip() for p in parts if p.strip())


def test_one_step_matches_the_library_run_alone(tmp_path: Path, make_spec: Any) -> None:
    """prompt_optimization.py's training loop (`model(x)`, `eval_fn(inputs=dict(prediction=response,
    ground_truth_answer=y))`, `tg.sum(losses).backward()`, `optimizer.step()`) with the example's
    `string_based_equality_fn` loss (textgrad/tasks/__init__.py, GSM8K_DSPy / object_counting): every gradient
    request the cell's proposer role was sent is one the library sends, the optimizer request is the library's up to
    the order of its gradient set, and the optimised prompt is the same. Up to ~7 s when it is the session's first
    import of textgrad (litellm) and of `textgrad.tasks.big_bench_hard` (pandas), for the library's own loss."""
    store, unit, _ = _first_step(tmp_path, make_spec)
    cell = store.cells()[0]["cell"]
    calls = [c for c in queries.calls(store, cell=cell, phase="practice") if c.unit == unit and c.request_blob]
    ours = [(m[0].content, m[1].content) for m in (store.get_request(c.request_blob) for c in calls
                                                   if c.role == "proposer")]
    state = _state_after(store, cell, unit)
    tasks = {t.id: t for t in build_benchmark("arith", BENCH).build()}
    batch_ids = state.order[:3]
    batch = [(f"Q: {tasks[i].prompt}\nA:", tasks[i].reference) for i in batch_ids]
    theirs, optimised = _library_step(state.prompt[0], batch)
    assert len(ours) == len(theirs) == 7  # 3 loss gradients, 3 prompt gradients, 1 update
    assert Counter(ours[:-1]) == Counter(theirs[:-1])
    assert ours[-1][0] == theirs[-1][0] and _chunks(ours[-1][1]) == _chunks(theirs[-1][1])
    assert optimised != state.prompt[0] and optimised == state.prompt[1]


def _state_after(store: RunStore, cell: str, unit: str) -> tgd.TgdState:
    rows = store.query("SELECT id AS version_id FROM harness_versions WHERE cell=? AND step=?", [cell, unit])
    states = [tgd.read_state(load_tree(store, r["version_id"])) for r in rows]
    found = [s for s in states if s is not None and len(s.prompt) == 2]
    assert found, "the step left no state"
    return found[0]


def test_constants_are_the_librarys() -> None:
    """The loss's purpose is `fn_purpose` of textgrad/tasks/__init__.py (`load_task`, the string-based tasks); the
    query role is textgrad/defaults.py `VARIABLE_INPUT_DEFAULT_ROLE`; the update tags are TextualGradientDescent's
    default `new_variable_tags` (textgrad/optimizer/optimizer.py)."""
    import inspect

    tg = tgd.textgrad()
    import textgrad.tasks as tasks
    from textgrad.defaults import VARIABLE_INPUT_DEFAULT_ROLE

    assert f'fn_purpose = "{tgd.FN_PURPOSE}"' in inspect.getsource(tasks)
    assert tgd.QUERY_ROLE == VARIABLE_INPUT_DEFAULT_ROLE
    source = inspect.getsource(tg.TextualGradientDescent.__init__)
    assert f'new_variable_tags = ["{tgd.TAGS[0]}", "{tgd.TAGS[1]}"]' in source


def test_recorded_with_the_librarys_version(tmp_path: Path, make_spec: Any) -> None:
    """The run records the library and its installed version (results.json `meta.extra.libraries`)."""
    from importlib.metadata import version

    _first_step(tmp_path, make_spec)
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert json.dumps(results["meta"]["extra"]["libraries"]).count(f"textgrad {version('textgrad')}") == 1
