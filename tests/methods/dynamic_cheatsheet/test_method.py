"""Dynamic Cheatsheet's update logic with scripted models (evidence: mechanism)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import Attempt, TaskView, policy
from evoarena.harness import HarnessWorkspace, load_tree
from evoarena.methods.dynamic_cheatsheet.method import (
    EMPTY,
    PAIRS,
    SHEET,
    DynamicCheatsheet,
    Pair,
    PairRow,
    read_pairs,
    read_sheet,
    retrieve,
)
from evoarena.models import GenParams, Message
from evoarena.models.base import Completion, Usage
from evoarena.protocol.boundary.client import StepContext
from evoarena.protocol.run.runner import run_experiment
from evoarena.retrieval import RETRIEVER_FILE, LexicalRetriever, RetrieverUnavailable, factory, similarity
from evoarena.scripted.arith import arith_student
from evoarena.store import RunStore

CURATOR_PROMPTS: list[str] = []
CURATOR_OUTPUTS: list[str] = []
SOLVER_CALLS: list[tuple[str, str]] = []  # (question, text before it)


@pytest.fixture(autouse=True)
def _fresh() -> None:
    CURATOR_PROMPTS.clear()
    CURATOR_OUTPUTS.clear()
    SOLVER_CALLS.clear()


def _is_curator(messages: Sequence[Message]) -> bool:
    return "# Cheatsheet curator" in messages[-1].content


def _solve(messages: Sequence[Message], params: GenParams) -> str:
    text = "\n\n".join(m.content for m in messages)
    last = list(re.finditer(r"^Q: (.+)$", text, flags=re.M))[-1]
    SOLVER_CALLS.append((last.group(1), text[: last.start()]))
    return arith_student(messages, params)


@policy("test-dc-cumulative")
def cumulative_curator(messages: Sequence[Message], params: GenParams) -> str:
    if not _is_curator(messages):
        return _solve(messages, params)
    CURATOR_PROMPTS.append(messages[-1].content)
    out = f"Let me think.\n<cheatsheet>\nVersion {len(CURATOR_PROMPTS)}\n- a strategy\n</cheatsheet>\nDone."
    CURATOR_OUTPUTS.append(out)
    return out


@policy("test-dc-untagged")
def untagged_curator(messages: Sequence[Message], params: GenParams) -> str:
    return "I would keep the sheet as it is." if _is_curator(messages) else _solve(messages, params)


@policy("test-dc-empty-tag")
def empty_tag_curator(messages: Sequence[Message], params: GenParams) -> str:
    return "<cheatsheet>  \n </cheatsheet>" if _is_curator(messages) else _solve(messages, params)


@policy("test-dc-rs")
def rs_curator(messages: Sequence[Message], params: GenParams) -> str:
    if not _is_curator(messages):
        return _solve(messages, params)
    prompt = messages[-1].content
    CURATOR_PROMPTS.append(prompt)
    nxt = prompt.split("## Next problem\n", 1)[1].split("\n\nWrite the complete", 1)[0]
    return f"<cheatsheet>sheet for: {nxt}</cheatsheet>"


def dc_spec(make_spec: Any, policy: str, **params: Any) -> Any:
    params.setdefault("retriever", "lexical")  # deterministic, and no model load where the extra is installed
    return make_spec(methods=[{"name": "dynamic_cheatsheet", "params": params}],
                     models={"s": {"backend": "scripted", "model": policy}}, roles={"solver": "s", "curator": "s"})


def last_practice_tree(run_dir: Path) -> dict[str, str]:
    store = RunStore(run_dir)
    rows = store.query("SELECT id FROM harness_versions ORDER BY rowid DESC LIMIT 1")
    return load_tree(store, rows[0]["id"])


def _section(prompt: str, title: str) -> str:
    return prompt.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0].split("\n\nWrite the complete", 1)[0].strip()


def test_cumulative_replaces_the_sheet_wholesale(tmp_path: Path, make_spec: Any) -> None:
    run_experiment(dc_spec(make_spec, "test-dc-cumulative"), tmp_path / "run", probe=False)  # it records prompts
    assert len(CURATOR_PROMPTS) >= 3
    assert _section(CURATOR_PROMPTS[0], "Previous cheatsheet") == EMPTY
    for n in range(1, len(CURATOR_PROMPTS)):  # prompt n+1 holds exactly curator output n, nothing older
        assert _section(CURATOR_PROMPTS[n], "Previous cheatsheet") == f"Version {n}\n- a strategy"
    # the curator sees the question and the solver's full output, generated before it with the old sheet
    questions = [q for q, _ in SOLVER_CALLS]
    for prompt in CURATOR_PROMPTS:
        assert _section(prompt, "Problem") in questions
        assert _section(prompt, "Solver output")
    final = last_practice_tree(tmp_path / "run")
    assert read_sheet(final) == f"Version {len(CURATOR_PROMPTS)}\n- a strategy"
    assert PAIRS not in final


@pytest.mark.parametrize("variant", ["cumulative", "retrieval_synthesis"])
@pytest.mark.parametrize("policy", ["test-dc-untagged", "test-dc-empty-tag"])
def test_malformed_curator_output_keeps_the_old_sheet(tmp_path: Path, make_spec: Any, policy: str,
                                                     variant: str) -> None:
    run_experiment(dc_spec(make_spec, policy, variant=variant), tmp_path / "run")
    assert read_sheet(last_practice_tree(tmp_path / "run")) == EMPTY
    events = RunStore(tmp_path / "run").query("SELECT payload FROM events WHERE kind='rejected_output'")
    assert events
    payload = json.loads(events[0]["payload"])
    assert payload["what"] == "cheatsheet" and "cheatsheet" in payload["reason"]


def test_retrieval_synthesis_retrieves_top_k_and_curates_before_generating(tmp_path: Path, make_spec: Any) -> None:
    run_experiment(dc_spec(make_spec, "test-dc-rs", variant="retrieval_synthesis", top_k=2), tmp_path / "run",
                   probe=False)  # the policy records every prompt it sees
    assert len(CURATOR_PROMPTS) >= 4
    seen: list[str] = []
    for prompt in CURATOR_PROMPTS:
        nxt = _section(prompt, "Next problem")
        got = re.findall(r"^### Earlier problem \d+\n(.+)$", prompt, flags=re.M)
        ranked = sorted(range(len(seen)), key=lambda i: (-similarity(nxt, seen[i]), i))[:2]
        assert got == [seen[i] for i in ranked]
        # the solver's attempt on this problem already saw the sheet curated for it
        assert any(q == nxt and f"sheet for: {nxt}" in ctx for q, ctx in SOLVER_CALLS)
        seen.append(nxt)
    store = RunStore(tmp_path / "run")
    logs = [json.loads(r["payload"]) for r in store.query("SELECT payload FROM events WHERE kind='dc_retrieval'")]
    assert logs and all(p["retriever"] == LexicalRetriever.name for p in logs)
    assert [p.input for p in read_pairs(last_practice_tree(tmp_path / "run"))] == seen


def test_retrieve_ranks_pair_inputs_not_outputs() -> None:
    pairs = [Pair("red apples and pears", "cars"), Pair("cars and trucks", "apples pears"), Pair("Apples, pears!", "x"),
             Pair("pears", "4")]
    assert [i for i, _ in retrieve(LexicalRetriever(), pairs, "apples pears", 3)] == [2, 0, 3]
    assert retrieve(LexicalRetriever(), [], "anything", 3) == []


def test_the_retriever_used_is_recorded_once_per_cell(tmp_path: Path, make_spec: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(factory, "import_error", lambda: "ModuleNotFoundError: no extra here")  # auto → lexical
    run_experiment(dc_spec(make_spec, "test-dc-rs", variant="retrieval_synthesis", retriever="auto"), tmp_path / "run")
    store = RunStore(tmp_path / "run")
    rows = store.query("SELECT cell, payload FROM events WHERE kind='retriever'")
    assert [json.loads(r["payload"]) for r in rows] == [{"name": LexicalRetriever.name, "requested": "auto"}]
    assert rows[0]["cell"]
    first = store.query("SELECT id FROM harness_versions ORDER BY rowid LIMIT 1")[0]["id"]
    assert load_tree(store, first)[RETRIEVER_FILE] == LexicalRetriever.name + "\n"  # in the initial harness
    assert last_practice_tree(tmp_path / "run")[RETRIEVER_FILE] == LexicalRetriever.name + "\n"


def test_cumulative_neither_resolves_nor_records_a_retriever(tmp_path: Path) -> None:
    method = DynamicCheatsheet(variant="cumulative", retriever="auto")
    ws = HarnessWorkspace(tmp_path)
    method.initialize(ws, "sys", GenParams())
    assert RETRIEVER_FILE not in ws.tree() and method.retrieval.resolved is None


class FakeModel:
    default_params = GenParams()

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def complete(self, messages: Sequence[Message], params: GenParams, sample_index: int = 0) -> Completion:
        self.prompts.append(messages[-1].content)
        return Completion(self.reply, Usage(1, 1), finish_reason="stop")


class FakeCtx:
    """Only what the method may use; asking for the reference or the grader's verdict fails the test."""

    ask = StepContext.ask  # the real `ask`, over this fake's model(), reject() and update_note


    def __init__(self, root: Path, curator: FakeModel, attempt_limit: int | None, note: str | None) -> None:
        self.harness = HarnessWorkspace(root)
        self.curator = curator
        self.attempt_limit = attempt_limit
        self.update_note = note
        self.solves = 0
        self.events: list[tuple[str, dict[str, Any]]] = []

    def model(self, role: str) -> FakeModel:
        assert role == "curator"
        return self.curator

    def solve(self, task: TaskView, **_: Any) -> Attempt:
        self.solves += 1
        assert self.attempt_limit is None or self.solves <= self.attempt_limit
        return Attempt(task.id, "I think it is 7", "7")

    def label(self, task: TaskView) -> str:
        raise AssertionError("the curator must not see the reference answer")

    def feedback(self, task: TaskView, attempt: Attempt) -> Any:
        raise AssertionError("Dynamic Cheatsheet uses no ground truth")

    def observation(self, task: TaskView, attempt: Attempt) -> str | None:
        return "RAN: 3 inputs, 1 total differs"  # what executing the answer shows (no verdict)

    def reject(self, what: str, raw: str, reason: str, **_: Any) -> None:
        self.events.append(("rejected_output", {"what": what}))

    def log(self, kind: str, payload: dict[str, Any]) -> None:
        self.events.append((kind, payload))


@pytest.mark.parametrize("variant", ["cumulative", "retrieval_synthesis"])
def test_one_solve_per_step_no_ground_truth_and_note_first(tmp_path: Path, variant: str) -> None:
    method = DynamicCheatsheet(variant=variant, retriever="lexical")
    ws = HarnessWorkspace(tmp_path)
    method.initialize(ws, "sys", GenParams())
    assert ws.read(SHEET).strip() == EMPTY
    curator = FakeModel("<cheatsheet>new sheet</cheatsheet>")
    ctx = FakeCtx(tmp_path, curator, attempt_limit=1, note="NOTE: be brief.")
    manifest = method.practice(ctx, TaskView("t1", "train", "s1", "What is 3 plus 4?"))  # type: ignore[arg-type]
    assert manifest is not None and ctx.solves == 1
    assert curator.prompts[0].startswith("NOTE: be brief.\n\n# Cheatsheet curator")
    if variant == "cumulative":  # the curator sees the generator's output with its execution output
        assert "I think it is 7\n\nExecution output:\nRAN: 3 inputs" in curator.prompts[0]
    else:  # the pair kept for later retrieval holds both
        assert "Execution output:\nRAN: 3 inputs" in read_pairs(ctx.harness.tree())[0].output
    assert read_sheet(ctx.harness.tree()) == "new sheet"
    assert "new sheet" in method.context(ctx.harness.tree(), TaskView("t2", "test", "s2", "?"))


def test_variant_is_validated() -> None:
    with pytest.raises(ValueError, match="variant"):
        DynamicCheatsheet(variant="bogus")
    with pytest.raises(ValueError, match="unknown"):
        DynamicCheatsheet(topk=3)
    with pytest.raises(ValueError, match="params.retriever: 'bm25' is not one of auto, embedding, lexical$"):
        DynamicCheatsheet(retriever="bm25")


def test_an_explicit_embedding_retriever_without_the_extra_fails_at_construction(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(factory, "import_error", lambda: "ModuleNotFoundError: no extra here")
    with pytest.raises(RetrieverUnavailable, match=r"evoarena\[retrieval\]"):
        DynamicCheatsheet(variant="retrieval_synthesis", retriever="embedding")


def test_a_pair_line_is_written_as_it_always_was_and_reads_back() -> None:
    row = PairRow(task_id="t1", input="2 + 2 — ?", output="4")
    assert row.line() == json.dumps({"task_id": "t1", "input": "2 + 2 — ?", "output": "4"}) + "\n"
    assert read_pairs({PAIRS: row.line() * 2}) == [Pair("2 + 2 — ?", "4")] * 2
