"""`meta_harness` (Lee et al., Meta-Harness, arXiv 2603.28052): a proposer that reads the whole search history — every
candidate's files, scores and traces — through tools and chooses what to read, instead of a compressed feedback.

State: `memory/meta_harness/` (history.py: candidates' files, per-task scores and traces, the append-only evolution
summary, the frontier, the pending proposals). One practice step = one iteration: `candidates_per_iteration`
proposals (the first exploits the best, the rest explore), each a tool-using conversation on the history view of
`access` mode (tools.py) — through function calling where the proposer's model offers it (functions.py), else a
plain-text tool protocol (`tool_protocol`) — advanced turn by turn for all proposals at once; every proposal is
written to pending before evaluation, passes an interface check and a one-task smoke test, then is evaluated on the
search tasks (train) in one rollout batch, missing results counting 0. The live harness is the most accurate
candidate on the Pareto frontier of accuracy vs context characters; a proposal edits the frontier candidate it
names (`parent`). Differences from the released code:
docs/methods/meta_harness.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field

from evoarena.api import Method, PracticeContext, Rollout, TaskView, method
from evoarena.harness import HarnessPathError, Manifest, check_relpath
from evoarena.harness.program import PROGRAM, program_interface
from evoarena.harness.state import parse_state
from evoarena.methods.jsonparse import first_json
from evoarena.methods.meta_harness.functions import propose_with_functions
from evoarena.methods.meta_harness.history import (
    FRONTIER,
    ROOT,
    SUMMARY,
    Access,
    Frontier,
    FrontierRow,
    Scores,
    SummaryEntry,
    candidate_dir,
    history_text,
    read_summary,
    state_files,
    traces_text,
    view,
)
from evoarena.methods.meta_harness.tools import final_candidates as _final_candidates
from evoarena.methods.meta_harness.tools import parse_call, run_tool
from evoarena.methods.prompting import render_prompt
from evoarena.methods.scoring import scored
from evoarena.search import Scored
from evoarena.search.pareto_context import context_frontier

_CLIP = 1500
EXPLOIT = "exploit: refine the current best harness where its traces show it fails."
EXPLORE = "explore: try a clearly different approach from the candidates so far."


def editable(path: str) -> bool:
    """What a candidate may write: `system.md`, `harness.py` (a harness program) and notes `memory/<name>.md`
    (never the method's own state)."""
    return path in ("system.md", PROGRAM) or (path.startswith("memory/") and path.endswith(".md")
                                               and path.count("/") == 1)


def harness_files(tree: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in tree.items() if editable(k)}


@method("meta_harness")
class MetaHarness(Method):
    roles = ("solver", "proposer")

    class Params(Method.Params):
        access: Access = Field("full", description="What the proposer's tools can read: `scores`, `scores+summary` "
                               "(also the summary), `full` (also every candidate's files and traces).")
        candidates_per_iteration: int = Field(2, ge=1, description="Proposals per iteration (the first told to "
                                                                   "exploit, the rest to explore).")
        max_tool_calls: int = Field(4, ge=0, description="Tool calls per proposal.")
        max_iterations: int = Field(0, ge=0, description="Iterations in all (0: every step).")
        proposer_max_tokens: int = Field(1024, ge=1, description="The proposer's reply cap.")
        proposer_temperature: float = Field(0.7, description="The proposer's sampling temperature.")
        inline_chars: int = Field(4000, ge=0, description="Compressed feedback written into the prompt, in "
                                                          "characters (0: none).")
        tool_protocol: Literal["auto", "text", "functions"] = Field("auto", description="How the proposer calls "
                                                                   "tools: `functions` where its model offers "
                                                                   "function calling (`auto`), else `text`.")
        programs: bool = Field(False, description="Candidates may be Python harness programs (`harness.py`).")
        parent: Literal["base_system", "best"] = Field("base_system", description="The candidate a proposal edits: "
                                                       "`base_system`, the frontier candidate the proposal names "
                                                       "(the best if it names none on the frontier), or `best`, "
                                                       "always the frontier's most accurate.")

    params: Params

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        notes = [tree[k].strip() for k in sorted(tree) if editable(k) and k != "system.md" and tree[k].strip()]
        return "\n\n".join(notes)

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if ctx.attempt_limit is not None:  # the protocol counts submissions: submit once with the live harness
            ctx.solve(task)
        tree = dict(ctx.harness.tree())
        history = state_files(tree)
        entries = read_summary(history)
        done = {e.iteration for e in entries}
        step = max(done, default=-1) + 1  # this iteration's number (0 is the seed)
        if not any(p.startswith("candidates/") for p in history):  # seed: the initial harness is c0
            self._evaluate(ctx, [("c0", {"name": "seed", "hypothesis": "the initial harness"},
                                  harness_files(tree), None)], iteration=0)
            return self._adopt(ctx, "seed the history with the initial harness")
        limit = self.params.max_iterations  # 0: every practice step is an iteration
        if limit and len(done - {0}) >= limit:
            return None
        best = self._best(ctx)
        proposals = self._propose(ctx, best, step)
        ctx.harness.write(ROOT + "pending.json", json.dumps([p for _, p in proposals], indent=1, sort_keys=True))
        front = self._frontier_ids(ctx)
        todo = []
        n = 1 + max(int(e.candidate[1:]) for e in entries)  # an id of its own per proposal, refused ones too
        for i, (raw, proposal) in enumerate(proposals):
            cid = f"c{n + i}"
            files, why = self._interface(proposal)
            if files is None:
                ctx.reject("candidate", raw, why)
                self._append(ctx, _entry(proposal, iteration=step, candidate=cid,
                                         outcome=f"interface check failed: {why}"))
                continue
            parent = parent_of(proposal, front, best, self.params.parent)
            todo.append((cid, proposal, {**self._files(ctx, parent), **files}, parent))
        self._evaluate(ctx, todo, iteration=step)
        ctx.harness.delete(ROOT + "pending.json")
        return self._adopt(ctx, f"{len(todo)} candidate(s) evaluated")

    # -- proposing ---------------------------------------------------------------------------------
    def _propose(self, ctx: PracticeContext, best: str, iteration: int) -> list[tuple[str, dict[str, Any]]]:
        """All proposals' conversations, advanced one turn at a time together; (last reply, parsed proposal). The
        proposer samples (`proposer_temperature`), each slot of each iteration with a seed of its own: a greedy
        proposer shown the same history twice would propose the same candidate twice."""
        k = self.params.candidates_per_iteration
        roles = [EXPLOIT, *[EXPLORE] * (k - 1)]
        history = view(ctx.harness.tree(), self.params.access)
        inline = inline_history(history, self.params.inline_chars)
        scores = self._scores(ctx, best)
        limit = self.params.max_tool_calls
        bases = self._frontier_ids(ctx) if self.params.parent == "base_system" else []
        if self._functions(ctx):
            prompts = [render_prompt(__package__, "propose_functions", best_id=best,
                                     best_accuracy=scores.accuracy, best_chars=scores.context_chars,
                                     best_files=self._files(ctx, best), mode=self.params.access,
                                     max_tool_calls=limit, role=role, inline=inline,
                                     programs=self.params.programs, bases=bases) for role in roles]
            return propose_with_functions(ctx, prompts, history, sample_indices=[iteration * k + i for i in range(k)],
                                          max_tool_calls=limit, max_tokens=self.params.proposer_max_tokens,
                                          temperature=self.params.proposer_temperature)
        transcripts = ["" for _ in roles]
        done: dict[int, tuple[str, dict[str, Any]]] = {}
        for turn in range(limit + 1):
            live = [i for i in range(k) if i not in done]
            if not live:
                break
            prompts = [render_prompt(__package__, "propose", best_id=best, best_accuracy=scores.accuracy,
                                     best_chars=scores.context_chars, best_files=self._files(ctx, best),
                                     mode=self.params.access, max_tool_calls=limit, role=roles[i],
                                     inline=inline, transcript=transcripts[i],
                                     programs=self.params.programs, bases=bases) for i in live]
            replies = ctx.ask_many("proposer", prompts, reject_cut_off="proposal",
                                   max_tokens=self.params.proposer_max_tokens,
                                   temperature=self.params.proposer_temperature,
                                   sample_indices=[iteration * k + i for i in live])
            for i, reply in zip(live, replies, strict=True):
                if reply is None:
                    done[i] = ("", {})
                    continue
                call = parse_call(reply.text) if turn < limit else None
                if call is not None:
                    transcripts[i] += (f"\n[you] TOOL: {call.name} {call.argument}\n[tool output]\n"
                                       f"{run_tool(history, call)}\n")
                    continue
                found = first_json(_final_candidates(reply.text), dict)
                done[i] = (reply.text, found or {})
        return [done.get(i, ("", {})) for i in range(k)]

    def _functions(self, ctx: PracticeContext) -> bool:
        """Whether the proposer calls its tools through function calling: `tool_protocol: functions`, or `auto` with
        a proposer model that offers it."""
        wanted, offered = self.params.tool_protocol, ctx.model("proposer").function_calling
        if wanted == "functions" and not offered:
            raise ValueError("methods.meta_harness.params.tool_protocol: functions, but the proposer's model does not "
                             "offer function calling (an openai model says so in its spec: function_calling: true)")
        return wanted == "functions" or (wanted == "auto" and offered)

    def _interface(self, proposal: Mapping[str, Any]) -> tuple[dict[str, str] | None, str]:
        """Meta-Harness's interface check: a `files` object of editable paths to texts, a system prompt that is not
        empty, and a harness program (only with `programs`) that compiles and defines `build_messages` — checked
        without running it: it runs only in the sandbox, first in the smoke test."""
        files = proposal.get("files")
        if not isinstance(files, dict) or not files:
            return None, "no `files` object in the FINAL JSON"
        for path, text in files.items():
            try:
                check_relpath(str(path))
            except HarnessPathError as err:
                return None, str(err)
            if not editable(str(path)) or not isinstance(text, str):
                return None, f"{path!r}: only system.md and memory/<name>.md, as text, may be written"
        if "system.md" in files and not str(files["system.md"]).strip():
            return None, "an empty system.md"
        if PROGRAM in files:
            if not self.params.programs:
                return None, f"{PROGRAM}: harness programs are off (params.programs)"
            why = program_interface(str(files[PROGRAM]))
            if why:
                return None, why
        return {str(k): str(v) for k, v in files.items()}, ""

    # -- evaluating --------------------------------------------------------------------------------
    def _evaluate(self, ctx: PracticeContext, todo: Sequence[tuple[str, Mapping[str, Any], Mapping[str, str],
                                                                    str | None]], iteration: int) -> None:
        """Smoke test (one task) then the whole search set, each in one rollout batch; results recorded."""
        tasks = list(ctx.train)
        if not todo or not tasks:
            return
        trees = [self._tree(ctx, files) for _, _, files, _ in todo]
        smoke = ctx.rollouts([Rollout(tasks[0], t) for t in trees])
        passed = [i for i, a in enumerate(smoke) if not a.error and a.answer is not None]
        for i in set(range(len(todo))) - set(passed):
            cid, proposal, _, parent = todo[i]
            self._append(ctx, _entry(proposal, iteration=iteration, candidate=cid, parent=parent,
                                     outcome="smoke test failed: no answer on one task"))
        runs = ctx.rollouts([Rollout(t, trees[i]) for i in passed for t in tasks])
        best_before = max((self._scores(ctx, c).accuracy for c in self._ids(ctx)), default=0.0)
        for j, i in enumerate(passed):
            cid, proposal, files, parent = todo[i]
            attempts = runs[j * len(tasks):(j + 1) * len(tasks)]
            scores, traces = {}, []
            for t, a in zip(tasks, attempts, strict=True):
                scores[t.id], output, message = scored(ctx, t, a)  # a missing result counts 0
                traces.append({"task": t.id, "input": t.prompt[:_CLIP], "output": output[:_CLIP],
                               "feedback": message[:_CLIP]})
            accuracy = sum(scores.values()) / len(scores)
            chars = sum(len(v) for v in files.values())
            d = ROOT + candidate_dir(cid)
            for path, text in files.items():
                ctx.harness.write(d + "files/" + path, text)
            ctx.harness.write(d + "scores.json", history_text(Scores(accuracy=accuracy, context_chars=chars,
                                                                     tasks=scores)))
            ctx.harness.write(d + "traces.md", traces_text(traces))
            parent_version = [self._version(ctx, parent)] if parent else []
            version = ctx.candidate(trees[i], parents=parent_version, intent=f"Meta-Harness {cid}: "
                                    f"{str(proposal.get('hypothesis', ''))[:200]}")
            ctx.harness.write(d + "version.txt", version)
            self._append(ctx, _entry(proposal, iteration=iteration, candidate=cid, parent=parent, accuracy=accuracy,
                                     delta_vs_best=accuracy - best_before, context_chars=chars, outcome="evaluated"))
        self._write_frontier(ctx)

    def _tree(self, ctx: PracticeContext, files: Mapping[str, str]) -> dict[str, str]:
        base = {k: v for k, v in ctx.harness.tree().items() if not k.startswith(ROOT) and not editable(k)}
        return {**base, **files}

    # -- the history ---------------------------------------------------------------------------------
    def _ids(self, ctx: PracticeContext) -> list[str]:
        found = {p[len(ROOT) + len("candidates/"):].split("/")[0] for p in ctx.harness.tree()
                 if p.startswith(ROOT + "candidates/") and p.endswith("/scores.json")}
        return sorted(found, key=lambda c: int(c[1:]))

    def _scores(self, ctx: PracticeContext, cid: str) -> Scores:
        return ctx.harness.load_state(ROOT + candidate_dir(cid) + "scores.json", Scores)

    def _files(self, ctx: PracticeContext, cid: str) -> dict[str, str]:
        prefix = ROOT + candidate_dir(cid) + "files/"
        return {k[len(prefix):]: v for k, v in ctx.harness.tree().items() if k.startswith(prefix)}

    def _version(self, ctx: PracticeContext, cid: str) -> str:
        return ctx.harness.read(ROOT + candidate_dir(cid) + "version.txt", "").strip()

    def _append(self, ctx: PracticeContext, entry: SummaryEntry) -> None:
        ctx.harness.append_record(ROOT + SUMMARY, entry)

    def _write_frontier(self, ctx: PracticeContext) -> None:
        ids = self._ids(ctx)
        scored = {c: self._scores(ctx, c) for c in ids}
        archive = [Scored(c, (scored[c].accuracy,)) for c in ids]
        front = context_frontier(archive, {c: float(scored[c].context_chars) for c in ids})
        rows = [FrontierRow(candidate=s.id, accuracy=scored[s.id].accuracy, context_chars=scored[s.id].context_chars)
                for s in front]
        ctx.harness.write(ROOT + FRONTIER, history_text(Frontier(rows)))

    def _frontier_ids(self, ctx: PracticeContext) -> list[str]:
        return [r.candidate for r in ctx.harness.load_state(ROOT + FRONTIER, Frontier).root]

    def _best(self, ctx: PracticeContext) -> str:
        """The frontier's most accurate candidate (ties: fewer characters, then the earliest)."""
        rows = ctx.harness.load_state(ROOT + FRONTIER, Frontier).root
        best = min(rows, key=lambda r: (-r.accuracy, r.context_chars, int(r.candidate[1:])))
        return best.candidate

    def _adopt(self, ctx: PracticeContext, intent: str) -> Manifest:
        best = self._best(ctx)
        for path in [k for k in ctx.harness.tree() if editable(k)]:
            ctx.harness.delete(path)
        for path, text in self._files(ctx, best).items():
            ctx.harness.write(path, text)
        s = self._scores(ctx, best)
        return Manifest(intent=f"Meta-Harness: {intent}; live = {best}",
                        evidence=f"search accuracy {s.accuracy:.3f}, {s.context_chars} context characters")


def parent_of(proposal: Mapping[str, Any], frontier: Sequence[str], best: str, rule: str) -> str:
    """The candidate `proposal` edits: with `base_system`, the frontier member it names in `base_system` (the
    released proposer picks its base system from the frontier file), else — no name, or one off the frontier —
    `best`; with `best`, always `best`."""
    named = str(proposal.get("base_system", "")).strip()
    return named if rule == "base_system" and named in frontier else best


def inline_history(history: Mapping[str, str], limit: int) -> str:
    """The compressed feedback every mode shows in the prompt itself (the paper's `scores` and `scores + summary`
    conditions are feedback given to the proposer, `full` adds the queryable files): the frontier, each candidate's
    accuracy and size, and — where the mode has it — the summary, newest lines first, within `limit` characters."""
    parts = []
    if FRONTIER in history:
        parts.append(f"frontier.json: {history[FRONTIER].strip()}")
    for path in sorted(p for p in history if p.endswith("/scores.json")):
        s = parse_state(ROOT + path, history[path], Scores)
        parts.append(f"{path.split('/')[1]}: accuracy {s.accuracy:.3f}, {s.context_chars} characters, "
                     f"per task {json.dumps(s.tasks, sort_keys=True)}")
    if SUMMARY in history:
        parts.extend(f"summary: {line}" for line in reversed(history[SUMMARY].splitlines()))
    text = ""
    for part in parts:
        if len(text) + len(part) + 1 > limit:
            break
        text += part + "\n"
    return text


def _entry(proposal: Mapping[str, Any], **fields: object) -> SummaryEntry:
    """A summary line of `proposal` with the keys its outcome sets (and only those)."""
    return SummaryEntry.model_validate({**fields, **_described(proposal)})


def _described(proposal: Mapping[str, Any]) -> dict[str, str]:
    return {k: str(proposal.get(k, ""))[:_CLIP] for k in ("name", "hypothesis", "changes", "expected_efficiency")}
