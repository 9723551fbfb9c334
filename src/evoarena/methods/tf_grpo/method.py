"""`tf_grpo` (Training-Free GRPO, Cai et al., 2025): group rollouts → semantic advantage → experience library.

State: `memory/experiences.json`, a JSON object {"G0": text, ...}, renumbered G0..Gn-1 after every update and
shown to the solver as "[G0]. text" lines. One practice step is one group on one train task (batch size 1).
Differences from the released code are in docs/methods/tf_grpo.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, Field

from evoarena.api import (
    Method,
    PracticeContext,
    Probe,
    ProbeExample,
    Reply,
    Rollout,
    TaskView,
    Verdict,
    harness_toml,
    method,
)
from evoarena.api.probe import judged, mentions, refused
from evoarena.api.reply_check import flaw
from evoarena.harness import HarnessWorkspace, Manifest
from evoarena.harness.state import Absent
from evoarena.methods.jsonparse import first_json, whole_and_fenced
from evoarena.methods.prompting import render_prompt, template_text
from evoarena.models import GenParams

MEMORY = "memory/experiences.json"
CRITIQUE_OPS = ("add", "modify")
UPDATE_OPS = {"original": ("add", "modify", "merge"), "main": ("add", "modify", "merge", "delete", "none")}


def read_library(tree: Mapping[str, str]) -> list[str]:
    """Experiences in id order (G0, G1, …); an unreadable file counts as empty."""
    try:
        data = json.loads(tree.get(MEMORY, "") or "{}")
    except json.JSONDecodeError:
        return []
    if not isinstance(data, dict):
        return []
    return [str(data[k]) for k in sorted(data, key=lambda k: int(k[1:]) if k[1:].isdigit() else 1 << 30)]


def dump_library(exps: list[str]) -> str:
    """Renumbered G0..Gn-1."""
    return json.dumps({f"G{i}": e for i, e in enumerate(exps)}, ensure_ascii=False, indent=1) + "\n"


def render_library(exps: list[str]) -> str:
    return "\n".join(f"[G{i}]. {e}" for i, e in enumerate(exps))


def extract_ops(text: str) -> list[Any] | None:
    """A JSON list of operations (a single object counts as a list of one). None when nothing parses."""
    candidates = whole_and_fenced(text)
    for open_, close in (("[", "]"), ("{", "}")):
        if open_ in text and close in text:
            candidates.append(text[text.index(open_) : text.rindex(close) + 1])
    value = first_json(candidates, (dict, list))
    if value is None:
        return None
    return [value] if isinstance(value, dict) else list(value)


class Op(BaseModel):
    """A checked library operation: its option, the experience ids it acts on, and the experience text it writes
    (add, modify and merge only)."""

    option: str
    ids: list[str]
    experience: Absent[str] = None


def check_op(op: Any, allowed: tuple[str, ...], n: int, max_words: int) -> tuple[Op | None, str]:
    """A normalised op {option, experience?, ids}, or (None, reason)."""
    if not isinstance(op, dict):
        return None, "operation is not an object"
    option = str(op.get("option", "")).strip().lower()
    if option not in allowed:
        return None, f"option {option!r} not allowed (allowed: {', '.join(allowed)})"
    ids: list[str] = []
    if option == "modify":
        ids = [str(op.get("modified_from", ""))]
    elif option == "merge":
        raw = op.get("merged_from")
        ids = [str(x) for x in raw] if isinstance(raw, list) else []
        if len(set(ids)) < 2:
            return None, "merge needs merged_from with at least 2 ids"
    elif option == "delete":
        ids = [str(op.get("delete_id", op.get("id", "")))]
    for i in ids:
        if not re.fullmatch(r"G\d+", i) or int(i[1:]) >= n:
            return None, f"unknown experience id {i!r}"
    out = Op(option=option, ids=list(dict.fromkeys(ids)))
    if option in ("add", "modify", "merge"):
        text = " ".join(str(op.get("experience", "")).split())
        if not text:
            return None, f"{option} without experience text"
        if len(text.split()) > max_words:
            return None, f"experience longer than {max_words} words"
        out.experience = text
    return out, ""


def checked_ops(raw: str, allowed: tuple[str, ...], n: int, max_words: int) -> tuple[list[Op] | None, str]:
    """Every op of `raw` checked, or (None, reason) when nothing parses or any op is malformed."""
    ops = extract_ops(raw)
    if ops is None:
        return None, "no JSON list of operations in output"
    out = []
    for op in ops:
        got, why = check_op(op, allowed, n, max_words)
        if got is None:
            return None, why
        out.append(got)
    return out, ""


def apply_ops(exps: list[str], ops: list[Op]) -> list[str]:
    """Apply checked ops; a delete overrides any other op on the same id (the `main` branch's rule)."""
    deleted = {i for op in ops if op.option == "delete" for i in op.ids}
    slots: dict[str, str | None] = {f"G{i}": e for i, e in enumerate(exps)}
    added: list[str] = []
    for op in ops:
        if op.option == "add":
            added.append(str(op.experience))
        elif op.option == "modify" and op.ids[0] not in deleted:
            slots[op.ids[0]] = op.experience
        elif op.option == "merge" and not deleted & set(op.ids):
            for i in op.ids:
                slots[i] = None
            added.append(str(op.experience))
    for i in deleted:
        slots[i] = None
    return [e for e in slots.values() if e is not None] + added


@method("tf_grpo")
class TfGrpo(Method):
    roles = ("solver", "summarizer", "critic", "updater")
    skill_kind = "experience library"

    class Params(Method.Params):
        group_size: int = Field(5, ge=1, description="Rollouts per group (the step's attempt and group_size - 1 "
                                                     "more).")
        temperature: float = Field(0.7, description="The solver's sampling temperature in harness.toml (the "
                                                    "released rollouts sample at 0.7).")
        max_words: int = Field(32, ge=1, description="An experience longer than this many words is refused.")
        variant: Literal["original", "main"] = Field("original", description="The update operations: `original` "
                                                     "add/modify/merge; `main` also delete.")
        max_tokens: int = Field(800, ge=1, description="The summarizer's, critic's and updater's reply cap.")

    params: Params

    @classmethod
    def skill_tree(cls, tree: Mapping[str, str]) -> dict[str, str] | None:
        """The experience library, as the solver is shown it, as the body of SKILL.md."""
        library = render_library(read_library(tree))
        if not library:
            return {"SKILL.md": ""}
        return {"SKILL.md": "# Experiences\n\nLessons distilled from groups of attempts; apply the relevant ones.\n\n"
                            + library + "\n"}

    @classmethod
    def state_view(cls, tree: Mapping[str, str]) -> dict[str, Any]:
        """The experience library held in a harness tree, in id order."""
        return {"library": read_library(tree)}

    def initialize(self, ws: HarnessWorkspace, system_prompt: str, solver_params: GenParams) -> None:
        super().initialize(ws, system_prompt, solver_params)
        # the released rollouts sample at temperature 0.7: the solver's knob lives in harness.toml
        ws.write("harness.toml", harness_toml(replace(solver_params, temperature=self.params.temperature)))

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        return render_prompt(__package__, "context", experiences=render_library(read_library(tree)))

    def _call(self, ctx: PracticeContext, role: str, prompt: str, *, note: bool = False) -> str | None:
        """One call in `role` (the update note only where `note`); None on a provider error or a cut-off reply."""
        reply = ctx.ask(role, prompt, max_tokens=self.params.max_tokens, note=note, reject_cut_off=role)
        return None if reply is None else reply.text

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        exps = read_library(ctx.harness.tree())
        rollouts = []
        group = [ctx.solve(task)]  # the first sample is the submitted attempt; the others run concurrently
        group += ctx.rollouts([Rollout(task, sample_index=i) for i in range(1, self.params.group_size)])
        for attempt in group:
            if attempt.error:
                continue
            rollouts.append((attempt, ctx.feedback(task, attempt)))
        rewards = [fb.score for _, fb in rollouts]
        mean = sum(rewards) / len(rewards) if rewards else 0.0
        if not 0.0 < mean < 1.0:
            ctx.log("no_mixed_group", {"task_id": task.id, "rollouts": len(rollouts), "mean_reward": mean})
            return None
        library = render_library(exps) or "(empty)"
        prompts = [render_prompt(__package__, "summarize", question=task.prompt, experiences=library,
                                 output=attempt.text.strip(), reward=fb.score, feedback=fb.message)
                   for attempt, fb in rollouts]
        # the per-rollout summaries are independent: one batch, read in rollout order (the first failure ends it)
        replies = ctx.ask_many("summarizer", prompts, max_tokens=self.params.max_tokens, note=False)
        summaries = []
        for k, ((_, fb), reply) in enumerate(zip(rollouts, replies, strict=True)):
            if reply is None:
                return None
            text = reply.text
            if reply.cut_off:
                ctx.reject("summarizer", text, f"summarizer cut off at max_tokens={self.params.max_tokens}")
                return None
            if self._flawed(ctx, "tf_grpo_summary", text, text, "summarize"):
                return None
            summaries.append(f"Rollout {k + 1} (reward {fb.score:g}): {' '.join(text.split())}")
        prompt = render_prompt(__package__, "critique", question=task.prompt, experiences=library,
                               summaries="\n".join(summaries), max_words=self.params.max_words)
        raw = self._call(ctx, "critic", prompt, note=True)  # only the critic sees the update note
        if raw is None:
            return None
        proposed = self._checked(ctx, "tf_grpo_critique", raw, CRITIQUE_OPS, len(exps))
        if proposed is None:
            return None
        if len(proposed) != 1:
            ctx.reject("tf_grpo_critique", raw, f"expected exactly 1 operation per group, got {len(proposed)}")
            return None
        if self._flawed(ctx, "tf_grpo_critique", raw, proposed[0].experience or "", "critique"):
            return None
        proposal = {"option": proposed[0].option, "experience": proposed[0].experience}
        if proposed[0].ids:
            proposal["modified_from"] = proposed[0].ids[0]
        raw = self._call(ctx, "updater", render_prompt(
            __package__, "update", experiences=library, proposed=json.dumps(proposal, ensure_ascii=False),
            main=self.params.variant == "main", max_words=self.params.max_words))
        if raw is None:
            return None
        ops = self._checked(ctx, "tf_grpo_update", raw, UPDATE_OPS[self.params.variant], len(exps))
        if ops is None:
            return None
        new = apply_ops(exps, ops)
        written = " ".join(op.experience or "" for op in ops)
        if self._flawed(ctx, "tf_grpo_update", raw, written, "update", items=new):
            return None
        ctx.log("tf_grpo_update", {"task_id": task.id, "mean_reward": mean, "ops": [op.model_dump() for op in ops],
                                   "size": len(new)})
        if new == exps:
            return None
        ctx.harness.write(MEMORY, dump_library(new))
        return Manifest(
            intent="update experience library from a mixed group",
            evidence=f"group of {len(rollouts)} on {task.id}, mean reward {mean:.2f}",
            expected_fixes=[task.id],
        )

    @staticmethod
    def _flawed(
        ctx: PracticeContext, what: str, raw: str, text: str, template: str, items: Sequence[str] | None = None
    ) -> bool:
        """Whether `text` (a summary, or the experiences a reply writes) fails the shared check — a refusal, a copy
        of template `template`'s own text, a library of repeated `items` — recorded as a rejection of its kind."""
        bad = flaw(text, template=template_text(__package__, template), items=items)
        if bad is not None:
            ctx.reject(what, raw, bad.reason, kind=bad.kind)
        return bad is not None

    def _checked(
        self, ctx: PracticeContext, what: str, raw: str, allowed: tuple[str, ...], n: int
    ) -> list[Op] | None:
        """All ops checked, or None (rejected, nothing adopted) when any op is malformed."""
        ops, why = checked_ops(raw, allowed, n, self.params.max_words)
        if ops is None:
            ctx.reject(what, raw, why)
        return ops

    def probes(self, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
        """Per example: the summarizer on the failed rollout, the critic on a mixed group of two summaries, the
        updater on the lesson proposed as an add to a one-experience library."""
        return tuple(p for ex in examples for p in tf_grpo_probes(self, ex))


# -- role probes --------------------------------------------------------------------------------------------------

PROBE_LIBRARY = ["Re-read the question before answering."]
"""The one-experience library the critic and updater probes start from."""


def check_summary(example: ProbeExample, reply: Reply) -> Verdict:
    """Adopted as the method adopts a summary (not cut off, not empty); usable when it says what the grader told."""
    if reply.cut_off:
        return refused("summary cut off at max_tokens")
    if not reply.text.strip():
        return refused("empty summary")
    bad = flaw(reply.text, template=template_text(__package__, "summarize"))
    if bad is not None:
        return judged(False, bad.reason)
    return judged(mentions(reply.text, [example.feedback], [example.task, example.output]),
                  "the summary says nothing the grader told")


def check_critique(example: ProbeExample, max_words: int, reply: Reply) -> Verdict:
    """Parsed as `practice` parses the critic (exactly one add/modify op); usable when the experience draws on the
    group's difference (a word of the lesson or the feedback not in the task)."""
    if reply.cut_off:
        return refused("critique cut off at max_tokens")
    ops, why = checked_ops(reply.text, CRITIQUE_OPS, len(PROBE_LIBRARY), max_words)
    if ops is None:
        return refused(why)
    if len(ops) != 1:
        return refused(f"expected exactly 1 operation per group, got {len(ops)}")
    return judged(mentions(str(ops[0].experience), [example.lesson, example.feedback], [example.task]),
                  "the experience draws nothing from the group's difference")


def check_update(allowed: tuple[str, ...], max_words: int, reply: Reply) -> Verdict:
    """Parsed as `practice` parses the updater; usable when its ops change the library."""
    if reply.cut_off:
        return refused("update cut off at max_tokens")
    ops, why = checked_ops(reply.text, allowed, len(PROBE_LIBRARY), max_words)
    if ops is None:
        return refused(why)
    return judged(apply_ops(PROBE_LIBRARY, ops) != PROBE_LIBRARY, "the operations leave the library unchanged")


def tf_grpo_probes(m: TfGrpo, ex: ProbeExample) -> tuple[Probe, ...]:
    max_words, max_tokens = m.params.max_words, m.params.max_tokens
    library = render_library(PROBE_LIBRARY)
    summaries = "\n".join((
        f"Rollout 1 (reward 0): answered {ex.answer}; the grader said: {ex.feedback}",
        f"Rollout 2 (reward 1): {ex.lesson} The answer was accepted.",
    ))
    proposal = json.dumps({"option": "add", "experience": ex.lesson}, ensure_ascii=False)
    return (
        Probe(f"summarize/{ex.id}", "summarizer", render_prompt(
            __package__, "summarize", question=ex.task, experiences="(empty)", output=ex.output.strip(), reward=0.0,
            feedback=ex.feedback), partial(check_summary, ex), max_tokens=max_tokens),
        Probe(f"critique/{ex.id}", "critic", render_prompt(
            __package__, "critique", question=ex.task, experiences=library, summaries=summaries, max_words=max_words),
            partial(check_critique, ex, max_words), max_tokens=max_tokens),
        Probe(f"update/{ex.id}", "updater", render_prompt(
            __package__, "update", experiences=library, proposed=proposal, main=m.params.variant == "main",
            max_words=max_words), partial(check_update, UPDATE_OPS[m.params.variant], max_words),
            max_tokens=max_tokens),
    )
