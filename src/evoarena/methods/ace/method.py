"""`ace` (Zhang et al., 2025, Agentic Context Engineering): generator → reflector → curator over a playbook.

State: `memory/playbook.md` (7 `## SECTION`s of `[slug-00042] helpful=H harmful=K :: content` bullets) and
`memory/ace_state.json` (the global bullet-id counter). Differences from the released code are in docs/methods/ace.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from pydantic import BaseModel, Field

from evoarena.api import (
    Attempt,
    Method,
    PracticeContext,
    Probe,
    ProbeExample,
    Reply,
    TaskView,
    TestSplitLocked,
    Verdict,
    method,
)
from evoarena.api.probe import judged, mentions, refused
from evoarena.api.reply_check import Flaw, flaw
from evoarena.harness import HarnessWorkspace, Manifest
from evoarena.harness.state import HarnessStateError
from evoarena.methods.ace.playbook import (
    SECTIONS,
    Bullet,
    Playbook,
    apply_operations,
    apply_tags,
    extract_json,
    parse_playbook,
    render_playbook,
)
from evoarena.methods.prompting import render_prompt, template_text
from evoarena.models import GenParams

PLAYBOOK = "memory/playbook.md"
STATE = "memory/ace_state.json"


class AceState(BaseModel):
    """The next bullet number (ids are never reused, so a deleted bullet's counters never pass to another)."""

    next_id: int = 1

    def text(self) -> str:
        """The file as it has always been written (one compact line): its bytes are part of every version's
        content address."""
        return json.dumps(self.model_dump()) + "\n"
REFLECTION = "memory/ace_reflection.md"  # only in the custom tree of a generator re-run, never in the harness
_CITED = re.compile(r"^\s*Bullets used:(.*)$", re.MULTILINE | re.IGNORECASE)
_BULLET_ID = re.compile(r"\b([a-z]+-\d{5})\b")
REFLECTION_KEYS = ("error_identification", "root_cause_analysis", "correct_approach", "key_insight")


def cited_ids(output: str) -> list[str]:
    """Bullet ids the solver cited: its closing "Bullets used:" line (asked for by the context, since the arena's
    solver answers in the benchmark's format), or `bullet_ids` when it answered in ACE's JSON."""
    line = _CITED.findall(output)
    if line:
        return _BULLET_ID.findall(line[-1])
    data = extract_json(output)
    ids = data.get("bullet_ids") if data else None
    return [str(i) for i in ids] if isinstance(ids, list) else []


def reflect_prompt(
    question: str, output: str, answer: str | None, ground_truth: str | None, feedback: str, cited: Sequence[Bullet]
) -> str:
    return render_prompt(__package__, "reflect", question=question, output=output.strip(), answer=answer,
                         ground_truth=ground_truth, feedback=feedback,
                         cited="\n".join(b.line() for b in cited) or "(none)")


def parse_reflection(reply: Reply) -> tuple[dict[str, Any] | None, str]:
    """The reflector's JSON object (adopted even when cut off, if it parses), or (None, why)."""
    data = extract_json(reply.text)
    if data is None:
        return None, "reflector output cut off at max_tokens" if reply.cut_off else "no JSON object in output"
    return data, ""


def parse_curation(raw: str) -> tuple[list[Any] | None, str]:
    """The curator's `operations` list, or (None, why)."""
    data = extract_json(raw)
    if data is None or not isinstance(data.get("operations"), list):
        return None, "no JSON object in output" if data is None else "JSON has no 'operations' list"
    return list(data["operations"]), ""


def reflection_text(reflection: Mapping[str, Any]) -> str:
    return "\n".join(f"{k}: {reflection[k]}" for k in REFLECTION_KEYS if reflection.get(k))


def reflection_flaw(reflection: Mapping[str, Any]) -> Flaw | None:
    """The shared check of a reflection's analysis: no refusal, no copy of the reflector template's own text."""
    text = "\n".join(str(reflection[k]) for k in REFLECTION_KEYS if reflection.get(k))
    return flaw(text, template=template_text(__package__, "reflect"))


def _added(op: Any) -> str:
    """The content an ADD operation would add ("" for any other operation)."""
    if not isinstance(op, dict) or str(op.get("type", "")).strip().upper() != "ADD":
        return ""
    return " ".join(str(op.get("content") or "").split())


def drop_repeats(pb: Playbook, operations: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """(operations kept, ADD operations dropped): an ADD whose content a bullet of the playbook (or an earlier ADD of
    the same curation) already has, case and whitespace aside — the exact-duplicate part of ACE's de-duplication."""
    seen = {" ".join(b.content.split()).lower() for b in pb.bullets()}
    kept, dropped = [], []
    for op in operations:
        key = _added(op).lower()
        if key and key in seen:
            dropped.append(op)
            continue
        seen.add(key)
        kept.append(op)
    return kept, dropped


def curation_flaw(pb: Playbook, operations: Sequence[Any]) -> Flaw | None:
    """The shared check of the bullets a curation adds: no refusal, no copy of the curator template's own text, and
    a playbook that would not be one bullet repeated (all its bullets, the new ones included, are the items)."""
    added = [a for a in map(_added, operations) if a]
    if not added:
        return None
    return flaw("\n".join(added), template=template_text(__package__, "curate"),
                items=[b.content for b in pb.bullets()] + added)


@method("ace")
class Ace(Method):
    roles = ("solver", "reflector", "curator")
    skill_kind = "playbook"

    class Params(Method.Params):
        max_reflector_rounds: int = Field(3, ge=0, description="Reflector rounds per failed attempt (each re-runs "
                                                               "the generator with the reflection).")
        curator_frequency: int = Field(1, description="The curator runs every this many steps (below 1: every "
                                                      "step).")
        token_budget: int = Field(80000, description="Printed in the curator prompt, never enforced (as released).")
        use_ground_truth: bool = Field(False, description="The reflector sees the task's reference answer.")
        reflector_max_tokens: int = Field(1024, ge=1, description="The reflector's reply cap.")
        curator_max_tokens: int = Field(1024, ge=1, description="The curator's reply cap.")

    params: Params

    @classmethod
    def skill_tree(cls, tree: Mapping[str, str]) -> dict[str, str] | None:
        """The playbook's bullets by section, with the curator's helpful/harmful counts kept as evidence."""
        pb = parse_playbook(tree.get(PLAYBOOK, ""))
        if not pb.bullets():
            return {"SKILL.md": ""}
        sections = [f"## {name.capitalize()}\n\n" + "\n".join(
            f"- {b.content} (helpful {b.helpful}, harmful {b.harmful})" for b in bullets)
            for name, bullets in pb.sections.items() if bullets]
        return {"SKILL.md": "# Playbook\n\nStrategies and insights learned so far: apply the relevant ones, avoid the "
                            "listed mistakes.\n\n" + "\n\n".join(sections) + "\n"}

    def initialize(self, ws: HarnessWorkspace, system_prompt: str, solver_params: GenParams) -> None:
        super().initialize(ws, system_prompt, solver_params)
        ws.write(PLAYBOOK, render_playbook(Playbook()))
        ws.write(STATE, AceState().text())

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        playbook = tree.get(PLAYBOOK, "")
        return render_prompt(
            __package__, "context",
            bullets=bool(parse_playbook(playbook).bullets()),
            playbook=playbook,
            reflection=tree.get(REFLECTION, "").strip(),
        )

    def probes(self, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
        """Per example: the reflector on the wrong answer (citing a playbook bullet), the curator on its lesson."""
        return ace_probes(self, examples)

    def curate_prompt(self, step: int, total: int, pb: Playbook, reflection: Mapping[str, Any], question: str) -> str:
        return render_prompt(
            __package__, "curate",
            token_budget=self.params.token_budget,
            step=step,
            total=total,
            stats=json.dumps(pb.stats()),
            reflection=json.dumps(dict(reflection), ensure_ascii=False, indent=1) if reflection else "(empty)",
            playbook=render_playbook(pb),
            question=question,
            sections=", ".join(SECTIONS),
        )

    # -- state ------------------------------------------------------------------------------------------------

    @staticmethod
    def _load(ctx: PracticeContext) -> tuple[Playbook, int]:
        pb = parse_playbook(ctx.harness.read(PLAYBOOK, default=""))
        try:
            next_id = ctx.harness.load_state(STATE, AceState, default=AceState()).next_id
        except HarnessStateError:  # the playbook's own numbers still keep ids unique
            next_id = 1
        return pb, max(next_id, pb.max_number() + 1)

    @staticmethod
    def _save(ctx: PracticeContext, pb: Playbook, next_id: int) -> None:
        ctx.harness.write(PLAYBOOK, render_playbook(pb))
        ctx.harness.write(STATE, AceState(next_id=next_id).text())

    # -- roles ------------------------------------------------------------------------------------------------

    def _reflect(
        self, ctx: PracticeContext, task: TaskView, attempt: Attempt, feedback: str, pb: Playbook
    ) -> dict[str, Any] | None:
        ground_truth = None
        if self.params.use_ground_truth:
            try:
                ground_truth = ctx.label(task)
            except TestSplitLocked:
                ground_truth = None
        cited = [b for b in (pb.find(i) for i in cited_ids(attempt.text)) if b is not None]
        prompt = reflect_prompt(task.prompt, attempt.text, attempt.answer, ground_truth, feedback, cited)
        # a cut-off reply is still adopted when its JSON parses; only the reason of a rejection names the cut
        reply = ctx.ask("reflector", prompt, max_tokens=self.params.reflector_max_tokens)
        if reply is None:
            return None
        data, why = parse_reflection(reply)
        if data is None:
            ctx.reject("ace_reflection", reply.text, why)
            return None
        bad = reflection_flaw(data)
        if bad is not None:
            ctx.reject("ace_reflection", reply.text, bad.reason, kind=bad.kind)
            return None
        return data

    def _curate(
        self, ctx: PracticeContext, task: TaskView, pb: Playbook, next_id: int, reflection: Mapping[str, Any]
    ) -> tuple[list[str], int]:
        prompt = self.curate_prompt(ctx.step + 1, len(ctx.train), pb, reflection, task.prompt)
        reply = ctx.ask("curator", prompt, max_tokens=self.params.curator_max_tokens)
        if reply is None:
            return [], next_id
        operations, why = parse_curation(reply.text)
        if operations is None:
            ctx.reject("ace_curation", reply.text, why)
            return [], next_id
        bad = curation_flaw(pb, operations)
        if bad is not None:
            ctx.reject("ace_curation", reply.text, bad.reason, kind=bad.kind)
            return [], next_id
        operations, repeats = drop_repeats(pb, operations)
        for op in repeats:
            ctx.reject("ace_bullet", json.dumps(op, ensure_ascii=False), "repeats a bullet of the playbook", part=True,
                       kind="repeated")
        added, next_id = apply_operations(pb, operations, next_id)
        return [b.id for b in added], next_id

    # -- one practice step ------------------------------------------------------------------------------------

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        pb, next_id = self._load(ctx)
        before = render_playbook(pb)
        attempt = ctx.solve(task)
        if attempt.error:
            return None
        fb = ctx.feedback(task, attempt)
        reflection: dict[str, Any] = {}
        tagged = 0
        if fb.passed:  # right: the reflector runs once and only the counters update
            data = self._reflect(ctx, task, attempt, fb.message, pb)
            if data is not None:
                reflection = data
                tagged += apply_tags(pb, data.get("bullet_tags"))
        else:
            for round_ in range(self.params.max_reflector_rounds):
                data = self._reflect(ctx, task, attempt, fb.message, pb)
                if data is None:
                    break
                reflection = data
                tagged += apply_tags(pb, data.get("bullet_tags"))
                self._save(ctx, pb, next_id)  # the re-run sees the updated counters
                tree = {**ctx.harness.tree(), REFLECTION: reflection_text(reflection)}
                attempt = ctx.rollout(task, tree=tree, sample_index=round_ + 1)  # re-generation: not submitted
                if attempt.error:
                    break
                fb = ctx.feedback(task, attempt)
                if fb.passed:
                    break
        added: list[str] = []
        if (ctx.step + 1) % max(1, self.params.curator_frequency) == 0:
            added, next_id = self._curate(ctx, task, pb, next_id, reflection)
        self._save(ctx, pb, next_id)
        if render_playbook(pb) == before:
            return None
        what = [f"add {', '.join(added)}"] if added else []
        what += [f"{tagged} counter update(s)"] if tagged else []
        return Manifest(
            intent=f"ace playbook: {'; '.join(what)}",
            evidence=f"{'passed' if fb.passed else 'failed'} attempt on {task.id}",
            expected_fixes=[task.id] if added else [],
        )


# -- role probes --------------------------------------------------------------------------------------------------

CITED = Bullet("str", 1, 0, 0, "Read the whole question before computing the answer.")


def probe_playbook() -> Playbook:
    """A playbook holding one bullet, the one the probe's wrong answer cited."""
    pb = Playbook()
    pb.sections["strategies & insights"].append(Bullet(CITED.slug, CITED.number, 0, 0, CITED.content))
    return pb


def check_reflection(example: ProbeExample, reply: Reply) -> Verdict:
    """Parsed by `parse_reflection`; usable when its analysis fields mention what the feedback told (a
    word of it not in the task or the answer)."""
    data, why = parse_reflection(reply)
    if data is None:
        return refused(why)
    text = reflection_text(data)
    if not text:
        return judged(False, "no error analysis or insight in the reflection")
    bad = reflection_flaw(data)
    if bad is not None:
        return judged(False, bad.reason)
    return judged(mentions(text, [example.feedback], [example.task, example.output]),
                  "the reflection says nothing the feedback told")


def check_curation(reply: Reply) -> Verdict:
    """Parsed by `parse_curation`; usable when its operations add at least one bullet to the playbook."""
    operations, why = parse_curation(reply.text)
    if operations is None:
        return refused(why)
    pb = parse_playbook(render_playbook(probe_playbook()))
    bad = curation_flaw(pb, operations)
    if bad is not None:
        return judged(False, bad.reason)
    added, _ = apply_operations(pb, operations, pb.max_number() + 1)
    return judged(bool(added), "no ADD operation with content")


def ace_probes(ace: Ace, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
    out: list[Probe] = []
    for ex in examples:
        output = f"{ex.output.strip()}\nBullets used: {CITED.id}"
        prompt = reflect_prompt(ex.task, output, ex.answer, None, ex.feedback, [CITED])
        out.append(Probe(f"reflect/{ex.id}", "reflector", prompt, partial(check_reflection, ex),
                         max_tokens=ace.params.reflector_max_tokens))
    for ex in examples:
        reflection = {"reasoning": ex.feedback, "error_identification": ex.feedback,
                      "root_cause_analysis": ex.lesson, "correct_approach": ex.lesson, "key_insight": ex.lesson,
                      "bullet_tags": [{"id": CITED.id, "tag": "harmful"}]}
        prompt = ace.curate_prompt(2, 10, probe_playbook(), reflection, ex.task)
        out.append(Probe(f"curate/{ex.id}", "curator", prompt, check_curation,
                         max_tokens=ace.params.curator_max_tokens))
    return tuple(out)
