"""ReasoningBank's judge → induce → append loop with scripted models (evidence: mechanism)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import Attempt, Feedback, TaskView, policy
from evoarena.harness import HarnessWorkspace, load_tree
from evoarena.methods.reasoning_bank.method import (
    BANK,
    BankRow,
    MemoryItem,
    ReasoningBank,
    parse_items,
    parse_judge,
    read_bank,
)
from evoarena.models import GenParams, Message
from evoarena.models.base import Completion, Usage
from evoarena.protocol.boundary.client import StepContext
from evoarena.protocol.run.runner import run_experiment
from evoarena.retrieval import RETRIEVER_FILE, LexicalRetriever, factory, similarity
from evoarena.scripted.arith import arith_student
from evoarena.store import RunStore

JUDGE_PROMPTS: list[str] = []
VERDICTS: list[str] = []
INDUCE_PROMPTS: list[str] = []
INDUCE_TEMPS: list[float] = []


def items_md(*titles: str) -> str:
    return "".join(f"# Memory Item {n}\n## Title {t}\n## Description about {t}\n## Content do {t} carefully\n\n"
                   for n, t in enumerate(titles, 1))

    for buf in (JUDGE_PROMPTS, VERDICTS, INDUCE_PROMPTS, INDUCE_TEMPS):
        buf.clear()


def _scripted(messages: Sequence[Message], params: GenParams, induction: str) -> str:
    prompt = messages[-1].content
    if prompt.startswith("# Trajectory judge"):
        JUDGE_PROMPTS.append(prompt)
        VERDICTS.append("success" if len(JUDGE_PROMPTS) % 2 else "failure")
        return f"Thoughts: looks {VERDICTS[-1]}.\nStatus: \"{VERDICTS[-1]}\""
    if prompt.startswith("# Memory induction"):
        INDUCE_PROMPTS.append(prompt)
        INDUCE_TEMPS.append(params.temperature)
        return induction.format(n=len(INDUCE_PROMPTS))
    return arith_student(messages, params)


@policy("test-rb")
def rb_policy(messages: Sequence[Message], params: GenParams) -> str:
    return _scripted(messages, params, "Thinking first.\n" + items_md("step{n}a", "step{n}b"))


@policy("test-rb-malformed")
def rb_malformed(messages: Sequence[Message], params: GenParams) -> str:
    return _scripted(messages, params, "# Memory Item 1\n## Title only a title {n}\n")


def rb_spec(make_spec: Any, policy: str, **params: Any) -> Any:
    params.setdefault("retriever", "lexical")  # deterministic, and no model load where the extra is installed
    return make_spec(methods=[{"name": "reasoning_bank", "params": params}],
                     models={"s": {"backend": "scripted", "model": policy}},
                     roles={"solver": "s", "judge": "s", "inducer": "s"})


def last_practice_tree(run_dir: Path) -> dict[str, str]:
    store = RunStore(run_dir)
    rows = store.query("SELECT id FROM harness_versions ORDER BY rowid DESC LIMIT 1")
    return load_tree(store, rows[0]["id"])


def test_judge_picks_the_prompt_and_items_are_appended_never_merged(tmp_path: Path, make_spec: Any) -> None:
    run_experiment(rb_spec(make_spec, "test-rb"), tmp_path / "run", probe=False)  # the policy records prompts
    assert len(JUDGE_PROMPTS) >= 3 and len(INDUCE_PROMPTS) == len(VERDICTS)
    for verdict, prompt in zip(VERDICTS, INDUCE_PROMPTS, strict=True):
        assert prompt.startswith(f"# Memory induction ({'successful' if verdict == 'success' else 'failed'}")
    assert set(INDUCE_TEMPS) == {1.0}
    final = last_practice_tree(tmp_path / "run")
    bank = read_bank(final)
    assert [r.status for r in bank] == VERDICTS
    assert [[i.title for i in r.items] for r in bank] == [[f"step{n}a", f"step{n}b"] for n in range(1, len(bank) + 1)]
    rows = [json.loads(line) for line in final[BANK].splitlines()]
    assert all(isinstance(r["grader_passed"], bool) and r["trajectory"] for r in rows)
    # retrieval: each step logs the earlier record whose QUERY is most similar to this task's
    store = RunStore(tmp_path / "run")
    logs = [json.loads(r["payload"]) for r in store.query("SELECT payload FROM events WHERE kind='rb_retrieval'")]
    assert len(logs) == len(bank) and all(p["retriever"] == LexicalRetriever.name for p in logs)
    for n, log in enumerate(logs):
        earlier = bank[:n]
        best = sorted(range(n), key=lambda i: (-similarity(bank[n].query, earlier[i].query), i))[:1]
        assert [r["task_id"] for r in log["retrieved"]] == [earlier[i].task_id for i in best]


def test_malformed_induction_is_rejected_and_nothing_appended(tmp_path: Path, make_spec: Any) -> None:
    run_experiment(rb_spec(make_spec, "test-rb-malformed"), tmp_path / "run", probe=False)  # it records prompts
    assert INDUCE_PROMPTS
    assert BANK not in last_practice_tree(tmp_path / "run")
    events = RunStore(tmp_path / "run").query("SELECT payload FROM events WHERE kind='rejected_output'")
    payload = json.loads(events[0]["payload"])
    assert payload["what"] == "memory_items" and "lacks description, content" in payload["reason"]


def test_context_shows_all_items_of_the_most_similar_past_query(tmp_path: Path) -> None:
    ws = HarnessWorkspace(tmp_path)
    for tid, query, titles in [("a", "red apples and pears", ["A1", "A2", "A3"]), ("b", "cars and trucks", ["B1"])]:
        row = {"task_id": tid, "query": query, "trajectory": "t", "status": "success", "grader_passed": True,
               "memory_items": [{"title": t, "description": "d", "content": "c"} for t in titles]}
        ws.append(BANK, json.dumps(row) + "\n")
    method = ReasoningBank(retriever="lexical")
    block = method.context(ws.tree(), TaskView("t", "test", "s", "how many trucks and cars"))
    assert "past experience" in block.lower() and "## Title B1" in block and "A1" not in block
    block = method.context(ws.tree(), TaskView("t", "test", "s", "apples or pears?"))
    assert all(f"## Title A{i}" in block for i in (1, 2, 3)) and "B1" not in block
    assert method.context({}, TaskView("t", "test", "s", "anything")) == ""


def test_the_retriever_used_is_recorded_once_per_cell(tmp_path: Path, make_spec: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(factory, "import_error", lambda: "ModuleNotFoundError: no extra here")  # auto → lexical
    run_experiment(rb_spec(make_spec, "test-rb", retriever="auto"), tmp_path / "run", probe=False)  # ditto
    store = RunStore(tmp_path / "run")
    rows = store.query("SELECT payload FROM events WHERE kind='retriever'")
    assert [json.loads(r["payload"]) for r in rows] == [{"name": LexicalRetriever.name, "requested": "auto"}]
    assert last_practice_tree(tmp_path / "run")[RETRIEVER_FILE] == LexicalRetriever.name + "\n"


def test_parsers() -> None:
    assert parse_judge("Thoughts: ok\nStatus: success") == "success"
    assert parse_judge("Status: **FAILURE**") == "failure"
    assert parse_judge("I think it succeeded") is None
    items, _ = parse_items(items_md("a", "b", "c", "d"), 3)
    assert items is not None and [i.title for i in items] == ["a", "b", "c"]
    assert parse_items("no items here", 3)[0] is None


class FakeModel:
    default_params = GenParams()

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []
        self.params: list[GenParams] = []
        self.finish = "stop"

    def complete(self, messages: Sequence[Message], params: GenParams, sample_index: int = 0) -> Completion:
        self.prompts.append(messages[-1].content)
        self.params.append(params)
        return Completion(self.reply, Usage(1, 1), finish_reason=self.finish)


class FakeCtx:
    """The grader's verdict carries a marker that must never reach a model prompt."""

    ask = StepContext.ask  # the real `ask`, over this fake's model(), reject() and update_note


    def __init__(self, root: Path, judge: FakeModel, inducer: FakeModel, note: str | None = None) -> None:
        self.harness = HarnessWorkspace(root)
        self.models = {"judge": judge, "inducer": inducer}
        self.attempt_limit = 1
        self.update_note = note
        self.solves = 0
        self.feedback_calls = 0
        self.observed: str | None = None  # a benchmark that only grades answers shows no execution output
        self.events: list[tuple[str, dict[str, Any]]] = []

    def model(self, role: str) -> FakeModel:
        return self.models[role]

    def solve(self, task: TaskView, **_: Any) -> Attempt:
        self.solves += 1
        assert self.solves <= self.attempt_limit
        return Attempt(task.id, "I think it is 7", "7")

    def label(self, task: TaskView) -> str:
        raise AssertionError("ReasoningBank must not see the reference answer")

    def feedback(self, task: TaskView, attempt: Attempt) -> Feedback:
        self.feedback_calls += 1
        assert all(m.prompts for m in self.models.values()), "the verdict is read only after judge and induction"
        return Feedback(passed=True, score=1.0, message="GRADER-SECRET")

    def observation(self, task: TaskView, attempt: Attempt) -> str | None:
        return self.observed

    def reject(self, what: str, raw: str, reason: str, **_: Any) -> None:
        self.events.append(("rejected_output", {"what": what}))

    def log(self, kind: str, payload: dict[str, Any]) -> None:
        self.events.append((kind, payload))


def test_execution_output_is_part_of_the_trajectory_the_judge_sees(tmp_path: Path) -> None:
    judge, inducer = FakeModel('Status: "failure"'), FakeModel(items_md("x"))
    ctx = FakeCtx(tmp_path, judge, inducer)
    ctx.observed = "RAN: total for A is 3, the example expects 2"
    ReasoningBank(retriever="lexical").practice(ctx, TaskView("t1", "train", "s1", "Q?"))  # type: ignore[arg-type]
    assert "Execution output:\nRAN: total for A is 3" in judge.prompts[0]
    assert "RAN: total" in inducer.prompts[0] and all("GRADER-SECRET" not in p for p in judge.prompts)


def test_a_cut_off_induction_is_rejected_and_nothing_appended(tmp_path: Path) -> None:
    judge, inducer = FakeModel("Status: success"), FakeModel(items_md("x"))
    inducer.finish = "length"
    ctx = FakeCtx(tmp_path, judge, inducer)
    assert ReasoningBank(retriever="lexical").practice(ctx, TaskView("t1", "train", "s1", "Q?")) is None  # type: ignore[arg-type]
    assert ctx.events.count(("rejected_output", {"what": "memory_items"})) == 1
    assert not ctx.harness.exists(BANK) and ctx.feedback_calls == 0


def test_judge_never_sees_the_grader_and_unclear_verdict_is_failure(tmp_path: Path) -> None:
    judge, inducer = FakeModel("Hmm, maybe fine."), FakeModel(items_md("x", "y", "z", "w"))
    ctx = FakeCtx(tmp_path, judge, inducer, note="NOTE: be brief.")
    manifest = ReasoningBank(retriever="lexical").practice(ctx, TaskView("t1", "train", "s1", "What is 3 plus 4?"))  # type: ignore[arg-type]
    assert manifest is not None and ctx.solves == 1 and ctx.feedback_calls == 1
    assert ("rejected_output", {"what": "judge"}) in ctx.events
    assert "I think it is 7" in judge.prompts[0] and "What is 3 plus 4?" in judge.prompts[0]
    assert all("GRADER-SECRET" not in p for p in judge.prompts + inducer.prompts)
    assert inducer.prompts[0].startswith("NOTE: be brief.\n\n# Memory induction (failed")
    assert not judge.prompts[0].startswith("NOTE")  # the judge gets no update note
    assert inducer.params[0].temperature == 1.0
    assert (judge.params[0].max_tokens, inducer.params[0].max_tokens) == (512, 1024)
    (row,) = [json.loads(line) for line in ctx.harness.read(BANK).splitlines()]
    assert row["status"] == "failure" and row["grader_passed"] is True
    assert [i["title"] for i in row["memory_items"]] == ["x", "y", "z"]
    assert any(kind == "rb_items_truncated" for kind, _ in ctx.events)


def test_params_are_validated() -> None:
    with pytest.raises(ValueError, match="top_n"):
        ReasoningBank(top_n=0)
    with pytest.raises(ValueError, match="unknown"):
        ReasoningBank(top_k=3)
    with pytest.raises(ValueError, match="params.retriever: 'bm25' is not one of auto, embedding, lexical"):
        ReasoningBank(retriever="bm25")


def test_a_bank_line_is_written_as_it_always_was_and_reads_back() -> None:
    item = MemoryItem("Check units", "d", "c — é")
    row = BankRow(task_id="t1", query="q", trajectory="tr", status="failure", memory_items=[item], grader_passed=False)
    assert row.line() == json.dumps({"task_id": "t1", "query": "q", "trajectory": "tr", "status": "failure",
                                     "memory_items": [{"title": "Check units", "description": "d",
                                                       "content": "c — é"}], "grader_passed": False}) + "\n"
    [record] = read_bank({BANK: row.line()})
    assert (record.task_id, record.status, record.items) == ("t1", "failure", (item,))
