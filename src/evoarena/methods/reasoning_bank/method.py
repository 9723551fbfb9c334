"""`reasoning_bank` (Ouyang et al., 2025): judge each trajectory, induce ≤3 memory items, append; retrieve by query.

State: `memory/reasoning_bank.jsonl`, one JSON line per practised task ({task_id, query, trajectory, status,
memory_items, grader_passed}); append-only, never merged or deleted. The solver sees all memory items of the
most similar earlier query, ranked by the retriever named in `memory/retriever.txt` (param `retriever`, see
docs/retrieval.md). Differences from the released code are in docs/methods/reasoning_bank.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from pydantic import BaseModel, Field

from evoarena.api import Method, PracticeContext, Probe, ProbeExample, Reply, TaskView, Verdict, method
from evoarena.api.probe import judged, mentions, refused
from evoarena.api.reply_check import Flaw, flaw
from evoarena.harness import HarnessWorkspace, Manifest
from evoarena.harness.state import parse_records
from evoarena.methods.prompting import generator_output, render_prompt, template_text
from evoarena.models import GenParams
from evoarena.retrieval import Hit, RetrieverChoice, RetrieverName

BANK = "memory/reasoning_bank.jsonl"
PROMPTS = {"success": "induce_success", "failure": "induce_failure"}
QUERY_INSTRUCTION = ("Given the earlier task queries, analyse the intent of the current query and select the "
                     "earlier queries whose experience could help solve it.")
"""Wraps the current query (not the stored ones) for embedding, as the released retrieval does; our wording."""

_STATUS = re.compile(r"^\W*status\W*:\W*(success|failure)\W*$", re.IGNORECASE | re.MULTILINE)
_ITEM = re.compile(r"^#[ \t]*Memory Item\b[^\n]*$", re.IGNORECASE | re.MULTILINE)
_FIELD = re.compile(r"^##[ \t]*(Title|Description|Content)\b[ \t]*:?[ \t]*", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class MemoryItem:
    title: str
    description: str
    content: str


class BankRow(BaseModel):
    """A line of the bank: the task, its trajectory, the judge's status, the items induced from it, and the
    grader's verdict (kept for analysis only)."""

    task_id: str
    query: str
    trajectory: str
    status: str
    memory_items: list[MemoryItem]
    grader_passed: bool

    def line(self) -> str:
        """The line as the bank has always been written (keys in order, ASCII): its bytes are part of every
        version's content address."""
        return json.dumps(self.model_dump()) + "\n"


@dataclass(frozen=True)
class Record:
    task_id: str
    query: str
    status: str
    items: tuple[MemoryItem, ...]


def read_bank(tree: Mapping[str, str]) -> list[Record]:
    return [Record(row.task_id, row.query, row.status, tuple(row.memory_items))
            for row in parse_records(BANK, tree.get(BANK, ""), BankRow)]


def parse_judge(raw: str) -> str | None:
    """`success` or `failure` from the last `Status:` line; None when there is none (the caller: failure)."""
    found = _STATUS.findall(raw)
    return found[-1].lower() if found else None


def parse_items(raw: str, max_items: int) -> tuple[list[MemoryItem] | None, str]:
    """The memory items in Title/Description/Content markdown, the first `max_items` of them.
    (None, reason) when there is no item or any item lacks a non-empty field."""
    starts = [m.end() for m in _ITEM.finditer(raw)]
    if not starts:
        return None, "no '# Memory Item' block in the induction output"
    ends = [m.start() for m in _ITEM.finditer(raw)][1:] + [len(raw)]
    items = []
    for n, (a, b) in enumerate(zip(starts, ends, strict=True), 1):
        block = raw[a:b]
        marks = list(_FIELD.finditer(block))
        fields: dict[str, str] = {}
        for k, m in enumerate(marks):
            stop = marks[k + 1].start() if k + 1 < len(marks) else len(block)
            fields.setdefault(m.group(1).lower(), " ".join(block[m.end():stop].split()))
        missing = [f for f in ("title", "description", "content") if not fields.get(f)]
        if missing:
            return None, f"memory item {n} lacks {', '.join(missing)}"
        items.append(MemoryItem(fields["title"], fields["description"], fields["content"]))
    return items[:max_items], ""


def check_judge(reply: Reply) -> Verdict:
    """A probe on a failed trajectory: `parse_judge` must find a status, and it must be `failure`."""
    status = parse_judge(reply.text)
    if status is None:
        return refused("no 'Status: success|failure' line")
    return judged(status == "failure", "called a failed trajectory a success")


def items_flaw(items: Sequence[MemoryItem], status: str) -> Flaw | None:
    """The shared check of induced memory items: no refusal, no copy of the inducer template's own text, not one
    item repeated (their contents are the items)."""
    text = "\n".join(f"{i.title} {i.description} {i.content}" for i in items)
    return flaw(text, template=template_text(__package__, PROMPTS[status]), items=[i.content for i in items])


def check_items(example: ProbeExample, max_items: int, reply: Reply) -> Verdict:
    """`parse_items` as `_induce` adopts them (not cut off); usable when they mention what running the answer showed
    (where the example shows it) and are no request for input."""
    if reply.cut_off:
        return refused("memory items cut off at max_tokens")
    items, why = parse_items(reply.text, max_items)
    if items is None:
        return refused(why)
    bad = items_flaw(items, "failure")
    if bad is not None:
        return judged(False, bad.reason)
    text = " ".join(f"{i.title} {i.description} {i.content}" for i in items)
    if not example.observation:
        return judged(True, "")
    return judged(mentions(text, [example.observation], [example.task, example.output]),
                  "says nothing the execution output told")


def _trajectory(ex: ProbeExample) -> str:
    return f"{ex.output.strip()}\n\nExecution output:\n{ex.observation.strip()}" if ex.observation else ex.output


@method("reasoning_bank")
class ReasoningBank(Method):
    roles = ("solver", "judge", "inducer")

    class Params(Method.Params):
        top_n: int = Field(1, ge=1, description="Memory records retrieved per task, by the similarity of their "
                                                "queries.")
        max_items: int = Field(3, ge=1, description="Memory items induced per step (extra items dropped).")
        temperature: float = Field(1.0, description="The inducer's sampling temperature.")
        max_tokens: int = Field(1024, ge=1, description="The inducer's reply cap.")
        judge_max_tokens: int = Field(512, ge=1, description="The judge's reply cap.")
        retriever: RetrieverName = Field("auto", description="What ranks earlier queries: `auto` (embeddings with the "
                                         "`retrieval` extra, else lexical), `embedding` or `lexical`.")

    params: Params

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.retrieval = RetrieverChoice(self.params.retriever, f"methods.{self.name}.params.retriever")

    def initialize(self, ws: HarnessWorkspace, system_prompt: str, solver_params: GenParams) -> None:
        super().initialize(ws, system_prompt, solver_params)
        self.retrieval.write_state(ws)

    def retrieve(self, tree: Mapping[str, str], query: str) -> tuple[list[Record], list[Hit]]:
        """All records and the (index, score) of the top-n most similar earlier QUERIES (not memory text);
        the current query is instruction-wrapped for an embedding retriever."""
        records = read_bank(tree)
        hits = self.retrieval.get().rank(query, [r.query for r in records], self.params.top_n,
                                         instruction=QUERY_INSTRUCTION)
        return records, hits

    def context_is_per_task(self) -> bool:
        """The items shown are retrieved by the task's query, so they differ from task to task."""
        return True

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        records, hits = self.retrieve(tree, task.prompt)
        items = [item for i, _ in hits for item in records[i].items]
        return render_prompt(__package__, "context", items=items) if items else ""

    def probes(self, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
        """Per failed example: the judge on its trajectory, the inducer's failure prompt on it."""
        out: list[Probe] = []
        for ex in examples:
            query, output = ex.task, _trajectory(ex)
            out.append(Probe(f"judge/{ex.id}", "judge", render_prompt(__package__, "judge", query=query, output=output),
                             check_judge, max_tokens=self.params.judge_max_tokens))
            out.append(Probe(f"induce/{ex.id}", "inducer",
                             render_prompt(__package__, PROMPTS["failure"], query=query, output=output),
                             partial(check_items, ex, self.params.max_items),
                             max_tokens=self.params.max_tokens))
        return tuple(out)

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if ctx.attempt_limit is not None and ctx.attempt_limit < 1:
            return None
        self.retrieval.announce(ctx)
        records, hits = self.retrieve(ctx.harness.tree(), task.prompt)
        ctx.log("rb_retrieval", {
            "task_id": task.id, "retriever": self.retrieval.get().name, "pool": len(records),
            "retrieved": [{"task_id": records[i].task_id, "score": round(s, 6)} for i, s in hits],
        })
        attempt = ctx.solve(task)  # the solver sees the retrieved items through context()
        if attempt.error:
            return None
        output = generator_output(ctx, task, attempt)  # the trajectory, with what executing the answer showed
        status = self._judge(ctx, task.prompt, output)
        if status is None:
            return None
        items = self._induce(ctx, status, task.prompt, output)
        if items is None:
            return None
        # the grader's verdict is recorded for analysis only; no prompt of this method ever shows it
        truth = ctx.feedback(task, attempt).passed
        row = BankRow(task_id=task.id, query=task.prompt, trajectory=output, status=status,
                      memory_items=list(items), grader_passed=bool(truth))
        ctx.harness.append(BANK, row.line())
        return Manifest(intent=f"append {len(items)} memory item(s) induced from a judged {status}",
                        evidence=f"{task.id}: judge said {status}")

    def _judge(self, ctx: PracticeContext, query: str, output: str) -> str | None:
        """The judge's verdict; anything but a clear success/failure counts as failure (strict, as released)."""
        prompt = render_prompt(__package__, "judge", query=query, output=output)
        reply = ctx.ask("judge", prompt, max_tokens=self.params.judge_max_tokens, note=False)  # no note
        if reply is None:
            return None
        status = parse_judge(reply.text)
        if status is None:
            ctx.reject("judge", reply.text, "no 'Status: success|failure' line; counted as failure")
            return "failure"
        return status

    def _induce(self, ctx: PracticeContext, status: str, query: str, output: str) -> list[MemoryItem] | None:
        prompt = render_prompt(__package__, PROMPTS[status], query=query, output=output)
        reply = ctx.ask("inducer", prompt, temperature=self.params.temperature,
                        max_tokens=self.params.max_tokens, reject_cut_off="memory_items")
        if reply is None:
            return None
        items, why = parse_items(reply.text, self.params.max_items)
        if items is None:
            ctx.reject("memory_items", reply.text, why)
            return None
        bad = items_flaw(items, status)
        if bad is not None:
            ctx.reject("memory_items", reply.text, bad.reason, kind=bad.kind)
            return None
        found = len(_ITEM.findall(reply.text))
        if found > len(items):
            ctx.log("rb_items_truncated", {"found": found, "kept": len(items)})
        return items
