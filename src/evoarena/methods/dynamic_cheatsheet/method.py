"""`dynamic_cheatsheet` (Suzgun et al., 2025): one evolving cheatsheet, rewritten wholesale by a curator.

State: `memory/cheatsheet.md` (the sheet, "(empty)" at first), shown to the solver before every task; for the
retrieval-synthesis variant also `memory/dc_pairs.jsonl`, the earlier (input, output) pairs to retrieve from, and
`memory/retriever.txt`, the retriever that ranks them (param `retriever`, see docs/retrieval.md).
Differences from the released code are in docs/methods/dynamic_cheatsheet.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, Field

from evoarena.api import Method, PracticeContext, Probe, ProbeExample, Reply, TaskView, Verdict, method
from evoarena.api.probe import judged, refused
from evoarena.api.reply_check import Flaw, flaw
from evoarena.harness import HarnessWorkspace, Manifest
from evoarena.harness.state import parse_records
from evoarena.methods.prompting import generator_output, render_prompt, template_text
from evoarena.models import GenParams
from evoarena.retrieval import Hit, Retriever, RetrieverChoice, RetrieverName

SHEET = "memory/cheatsheet.md"
PAIRS = "memory/dc_pairs.jsonl"
EMPTY = "(empty)"

_TAG = re.compile(r"<cheatsheet>(.*?)</cheatsheet>", re.DOTALL)


@dataclass(frozen=True)
class Pair:
    input: str
    output: str


def read_sheet(tree: Mapping[str, str]) -> str:
    return tree.get(SHEET, "").strip() or EMPTY


class PairRow(BaseModel):
    """A line of the pairs log: a practice task's input and the generator's output on it."""

    task_id: str
    input: str
    output: str

    def line(self) -> str:
        """The line as the log has always been written (keys in order, ASCII): its bytes are part of every
        version's content address."""
        return json.dumps(self.model_dump()) + "\n"


def read_pairs(tree: Mapping[str, str]) -> list[Pair]:
    return [Pair(row.input, row.output) for row in parse_records(PAIRS, tree.get(PAIRS, ""), PairRow)]


def retrieve(retriever: Retriever, pairs: list[Pair], query: str, top_k: int) -> list[Hit]:
    """(index, score) of the `top_k` earlier pairs whose input is most similar to `query`, best first; ties go to
    the earlier pair. No threshold and no correctness filter, as released."""
    return retriever.rank(query, [p.input for p in pairs], top_k)


def parse_sheet(raw: str) -> tuple[str | None, str]:
    """The text inside the last `<cheatsheet>…</cheatsheet>`, or (None, reason) when it is missing or empty."""
    found = _TAG.findall(raw)
    if not found:
        return None, "no <cheatsheet>…</cheatsheet> block in the curator output"
    text = found[-1].strip()
    if not text:
        return None, "empty <cheatsheet> block"
    return text, ""


def check_sheet(old: str, template: str, reply: Reply) -> Verdict:
    """A probe reply judged by `parse_sheet` (a cut-off sheet still counts, as in `_curate`); usable when it passes
    the shared check `_curate` applies (`sheet_flaw`)."""
    sheet, why = parse_sheet(reply.text)
    if sheet is None:
        return refused(why)
    bad = sheet_flaw(sheet, template)
    if bad is not None:
        return judged(False, bad.reason)
    return judged(sheet.strip() != old.strip(), "the cheatsheet is unchanged")


def sheet_flaw(sheet: str, template: str) -> Flaw | None:
    """The shared check of a new sheet: no refusal, no copy of the curator template `template`'s own text, not one
    line repeated (its non-empty lines are the items). The old sheet kept as it was is no flaw: the curator may
    find nothing to add (the step then changes nothing)."""
    return flaw(sheet, template=template_text(__package__, template),
                items=[line.strip(" -*\t") for line in sheet.splitlines() if line.strip(" -*\t")])


PROBE_SHEET = "## Strategies\n- Read the whole problem before answering. ** Count: 1"


def _output(ex: ProbeExample) -> str:
    return f"{ex.output.strip()}\n\nExecution output:\n{ex.observation.strip()}" if ex.observation else ex.output


@method("dynamic_cheatsheet")
class DynamicCheatsheet(Method):
    roles = ("solver", "curator")
    skill_kind = "cheatsheet"

    class Params(Method.Params):
        variant: Literal["cumulative", "retrieval_synthesis"] = Field("cumulative", description="`cumulative`: one "
                                                                      "cheatsheet rewritten after each step; "
                                                                      "`retrieval_synthesis`: curated before each "
                                                                      "task from the most similar earlier pairs.")
        top_k: int = Field(3, ge=1, description="Earlier pairs retrieved per task (`retrieval_synthesis`).")
        max_tokens: int = Field(2048, ge=1, description="The curator's reply cap.")
        retriever: RetrieverName = Field("auto", description="What ranks earlier pairs: `auto` (embeddings with the "
                                         "`retrieval` extra, else lexical), `embedding` or `lexical`.")

    params: Params

    @classmethod
    def skill_tree(cls, tree: Mapping[str, str]) -> dict[str, str] | None:
        """The cheatsheet as the body of SKILL.md."""
        sheet = tree.get(SHEET, "").strip()
        if not sheet:
            return {"SKILL.md": ""}
        return {"SKILL.md": "# Cheatsheet\n\nStrategies and worked solutions from earlier problems; use what is "
                            "relevant.\n\n" + sheet + "\n"}

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.retrieval = RetrieverChoice(self.params.retriever, f"methods.{self.name}.params.retriever")

    def initialize(self, ws: HarnessWorkspace, system_prompt: str, solver_params: GenParams) -> None:
        super().initialize(ws, system_prompt, solver_params)
        ws.write(SHEET, EMPTY + "\n")
        if self.params.variant == "retrieval_synthesis":
            self.retrieval.write_state(ws)

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        return render_prompt(__package__, "context", sheet=read_sheet(tree))

    def probes(self, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
        """Per example, the variant's curator prompt: on an empty sheet and on a one-entry sheet (cumulative), or
        with the example as the retrieved earlier pair before the next problem (retrieval synthesis)."""
        out: list[Probe] = []
        for i, ex in enumerate(examples):
            if self.params.variant == "cumulative":
                for name, old in (("empty", EMPTY), ("sheet", PROBE_SHEET)):
                    prompt = render_prompt(__package__, "curate_cumulative", question=ex.task, output=_output(ex),
                                           sheet=old)
                    out.append(Probe(f"curate-{name}/{ex.id}", "curator", prompt,
                                     partial(check_sheet, old, "curate_cumulative"),
                                     max_tokens=self.params.max_tokens))
            else:
                nxt = examples[(i + 1) % len(examples)]
                prompt = render_prompt(__package__, "curate_rs", sheet=EMPTY, pairs=[Pair(ex.task, _output(ex))],
                                       question=nxt.task)
                out.append(Probe(f"curate-rs/{ex.id}", "curator", prompt, partial(check_sheet, EMPTY, "curate_rs"),
                                 max_tokens=self.params.max_tokens))
        return tuple(out)

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if self.params.variant == "cumulative":
            return self._cumulative(ctx, task)
        return self._retrieval_synthesis(ctx, task)

    # --- DC-Cumulative: generate with the current sheet, then the curator rewrites it ---
    def _cumulative(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if ctx.attempt_limit is not None and ctx.attempt_limit < 1:
            return None
        old = read_sheet(ctx.harness.tree())
        attempt = ctx.solve(task)
        if attempt.error:
            return None
        output = generator_output(ctx, task, attempt)
        prompt = render_prompt(__package__, "curate_cumulative", question=task.prompt, output=output, sheet=old)
        new = self._curate(ctx, prompt, "curate_cumulative")
        if new is None or new == old:
            return None
        ctx.harness.write(SHEET, new + "\n")
        return Manifest(intent="replace the cheatsheet (DC-Cumulative curator)", evidence=f"solver output on {task.id}")

    # --- DC-RS: retrieve similar earlier pairs, curate before generating, then generate ---
    def _retrieval_synthesis(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        tree = ctx.harness.tree()
        old = read_sheet(tree)
        pairs = read_pairs(tree)
        self.retrieval.announce(ctx)
        retriever = self.retrieval.get()
        hits = retrieve(retriever, pairs, task.prompt, self.params.top_k)
        ctx.log("dc_retrieval", {
            "task_id": task.id, "retriever": retriever.name, "pool": len(pairs),
            "retrieved": [{"index": i, "score": round(s, 6)} for i, s in hits],
        })
        changed = []
        prompt = render_prompt(__package__, "curate_rs", sheet=old, pairs=[pairs[i] for i, _ in hits],
                               question=task.prompt)
        new = self._curate(ctx, prompt, "curate_rs")
        if new is not None and new != old:
            ctx.harness.write(SHEET, new + "\n")
            changed.append("cheatsheet")
        if ctx.attempt_limit is None or ctx.attempt_limit >= 1:
            attempt = ctx.solve(task)  # generation sees the freshly curated sheet
            if not attempt.error:
                row = PairRow(task_id=task.id, input=task.prompt, output=generator_output(ctx, task, attempt))
                ctx.harness.append(PAIRS, row.line())
                changed.append("pairs")
        if not changed:
            return None
        return Manifest(
            intent=f"DC-RS: update {' and '.join(changed)}",
            evidence=f"curated before {task.id} with {len(hits)} retrieved pair(s) ({retriever.name})",
        )

    def _curate(self, ctx: PracticeContext, prompt: str, template: str) -> str | None:
        """One curator call; the new sheet, or None (recorded as a rejection) when the output is unusable or fails
        the shared check (`sheet_flaw`)."""
        reply = ctx.ask("curator", prompt, max_tokens=self.params.max_tokens)  # a cut-off sheet still counts
        if reply is None:
            return None
        sheet, why = parse_sheet(reply.text)
        if sheet is None:
            ctx.reject("cheatsheet", reply.text, why)
            return None
        bad = sheet_flaw(sheet, template)
        if bad is not None:
            ctx.reject("cheatsheet", reply.text, bad.reason, kind=bad.kind)
            return None
        return sheet
