"""SkillProx's forward step, one iteration k on a training batch B_k.

Closed loop: run X_k on B_k; the diagnoser reads every batch trajectory (failures against the batch's successes),
the last update summaries with their measured outcomes and why the previous candidate of this iteration was
rejected; a momentum agent folds the per-task diagnoses into the persistent pattern record and this iteration's
overlay; the patcher writes candidate j from the iteration's starting snapshot X_k; the candidate is re-executed on
B_k and passes iff hard accuracy H and cell accuracy C both do not drop. A strict H gain ends the search; else up
to `max_candidates` are tried and the best passing one (H, then C; ties to the earliest) becomes X_{k+1}; if none
passes, X_k is kept (rollback). Open loop (G1): one candidate, committed without re-execution. Without
`diagnosis` (G2) the gate and rollback stay but no measured outcome reaches the diagnoser or patcher.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evoarena.api import PracticeContext, Reply, TaskView
from evoarena.methods.prompting import render_prompt
from evoarena.methods.skillprox.common import (
    TOL,
    Batch,
    TaskResult,
    clip,
    evaluate,
)
from evoarena.methods.skillprox.patch import Patch, json_object, parse_patch
from evoarena.methods.skillprox.skill import (
    ROOT,
    Skill,
    char_stats,
    render,
    size,
    skill_diff,
    skill_of,
    struct_problems,
    with_skill,
)
from evoarena.methods.skillprox.state import CandidateRecord, Diagnosis, HistoryEntry, IterationRecord, State
from evoarena.search import NonRegression, StrictImprovement

TEXT_LIMIT = 6000  # characters of a task prompt, output or feedback shown to the diagnoser
OTHER_LIMIT = 800  # … of another batch task's (the contrast)


@dataclass(frozen=True)
class ForwardConfig:
    closed: bool  # re-execute and gate candidates (False: open loop, G1)
    diagnosis: bool  # measured outcomes reach the diagnoser/patcher (closed-loop diagnosis)
    max_candidates: int
    history: int  # update summaries shown
    max_patterns: int  # entries of the momentum pattern record

    @property
    def feedback(self) -> bool:
        return self.closed and self.diagnosis


@dataclass
class Candidate:
    j: int
    patch: Patch | None = None
    refused: str = ""  # why the reply was refused before re-execution
    after: Batch | None = None
    passed: bool = False
    outcome: str = ""  # accepted | rejected | not_selected | malformed | committed
    reason: str = ""
    diagnoses: list[Diagnosis] = field(default_factory=list)
    overlay: str = ""

    @property
    def summary(self) -> str:
        return self.patch.summary if self.patch else ""


def _key(b: Batch) -> tuple[float, float]:
    return round(b.hard, 9), round(b.cell, 9)


HOLD = NonRegression(slack=TOL)
"""Gate_fwd on one metric: no drop beyond float noise."""
GAIN = StrictImprovement(margin=TOL)
"""A strict H gain (beyond float noise) ends the candidate search."""


def gate(before: Batch, after: Batch) -> bool:
    """Gate_fwd: neither H nor C drops on the same batch."""
    return (HOLD.decide([before.hard], [after.hard]).accepted
            and HOLD.decide([before.cell], [after.cell]).accepted)


def verdict(before: Batch, after: Batch) -> str:
    """What the re-execution measured, in words (the rejection reason the next diagnosis reads)."""
    drops = [name for name, a, b in (("hard", before.hard, after.hard), ("cell", before.cell, after.cell))
             if b < a - TOL]
    a, b = before.row().tasks, after.row().tasks
    broke = [t for t in a if a[t].passed and not b[t].passed]
    fixed = [t for t in a if not a[t].passed and b[t].passed]
    text = (f"hard accuracy {before.hard:.2f} -> {after.hard:.2f}, cell accuracy {before.cell:.3f} -> "
            f"{after.cell:.3f}" + "".join(f"; {d} accuracy dropped" for d in drops))
    if broke:
        text += f"; newly failing: {', '.join(broke)}"
    if fixed:
        text += f"; newly passing: {', '.join(fixed)}"
    return text


def _task(r: TaskResult, limit: int) -> dict[str, Any]:
    return {"id": r.task.id, "prompt": clip(r.task.prompt, limit), "output": clip(r.output, limit),
            "feedback": clip(r.feedback, limit), "passed": r.passed, "score": f"{r.score:.3f}"}


def history_lines(entries: Sequence[HistoryEntry], cfg: ForwardConfig) -> list[str]:
    """The last `cfg.history` update summaries. With closed-loop diagnosis each carries its measured outcome;
    otherwise only what was written into the skill (accepted or committed updates), as an open loop knows it."""
    lines = []
    for e in entries:
        if cfg.feedback:  # the reason holds the measured H/C (or why the reply was refused)
            why = f" -- {e.reason}" if e.reason else ""
            lines.append(f"iteration {e.iteration}, candidate {e.candidate}: {e.outcome.upper()}: "
                         f"{e.summary or '(no patch)'}{why}")
        elif e.outcome in ("accepted", "committed"):
            lines.append(f"iteration {e.iteration}: {e.summary}")
    return lines[-cfg.history :] if cfg.history > 0 else []


def _strings(obj: Any, keys: Sequence[str]) -> str:
    """'' if every key holds a non-empty string, else why not."""
    if not isinstance(obj, dict):
        return "not a JSON object"
    bad = [k for k in keys if not isinstance(obj.get(k), str) or not obj[k].strip()]
    return f"needs non-empty string field(s) {', '.join(bad)}" if bad else ""


def parse_diagnosis(reply: Reply) -> tuple[tuple[str, str] | None, str]:
    """(diagnosis, skill_change) of a diagnoser reply, or (None, why) when it is refused."""
    obj = json_object(reply.text)
    why = _strings(obj, ("diagnosis", "skill_change"))
    if not why and reply.cut_off:
        why = "diagnoser output cut off at max_tokens"
    if why or obj is None:
        return None, why
    return (str(obj["diagnosis"]).strip(), str(obj["skill_change"]).strip()), ""


def adopt_patch(reply: Reply, skill: Skill) -> tuple[Patch | None, str]:
    """The patch a patcher reply makes to `skill` and '' when it is adopted, else why not (a parsed patch that breaks
    the skill's structure or was cut off is returned with its reason, for the counters)."""
    parsed = parse_patch(reply.text, skill)
    if isinstance(parsed, str):
        return None, parsed
    problems = struct_problems(parsed.skill)
    if problems:
        return parsed, f"breaks the skill structure: {'; '.join(problems)}"
    return parsed, "patcher output cut off at max_tokens" if reply.cut_off else ""


class ForwardStep:
    """One forward iteration; `state` (the method's state.json) is updated in place."""

    def __init__(self, ctx: PracticeContext, cfg: ForwardConfig, state: State,
                 history: Sequence[HistoryEntry]) -> None:
        self.ctx = ctx
        self.cfg = cfg
        self.state = state
        self.history = history_lines(history, cfg)

    def run(self, k: int, batch: Sequence[TaskView],
            known: Mapping[str, TaskResult]) -> tuple[IterationRecord, list[HistoryEntry]]:
        """Iteration `k` on `batch`; writes the new skill into the harness when one is adopted; returns the record
        and the entries for the history file."""
        ctx, counters = self.ctx, self.state.counters
        tree0 = ctx.harness.tree()
        skill0 = skill_of(tree0)
        before = evaluate(ctx, tree0, batch, known)
        rec = IterationRecord(iteration=k, batch=[t.id for t in batch], before=before.row(), G_before=size(skill0),
                              chars_before=char_stats(skill0))
        entries: list[HistoryEntry] = []
        if all(r.passed for r in before.results):
            self.state.streak += 1
            rec.outcome, rec.after, rec.G_after, rec.chars_after = ("all_correct", before.row(), size(skill0),
                                                                    char_stats(skill0))
            return rec, entries
        self.state.streak = 0
        counters.update_iterations += 1
        cands: list[Candidate] = []
        feedback = ""
        for j in range(1, (self.cfg.max_candidates if self.cfg.closed else 1) + 1):
            cand = self._candidate(j, skill0, before, feedback)
            cands.append(cand)
            counters.candidates += 1
            if cand.patch is not None and self.cfg.closed:
                cand.after = evaluate(ctx, with_skill(tree0, cand.patch.skill), batch)
                cand.passed = gate(before, cand.after)
                cand.reason = verdict(before, cand.after)
                if cand.passed and GAIN.decide([before.hard], [cand.after.hard]).accepted:
                    break
            if self.cfg.feedback:
                feedback = self._feedback(cand)
        chosen = self._choose(cands)
        new = chosen.patch.skill if chosen is not None and chosen.patch is not None else skill0
        if chosen is not None:
            counters.accepted_iterations += 1
            set_skill(ctx, skill0, new)
        rec.outcome, rec.after = ("rolled_back" if self.cfg.closed else "no_valid_patch"), before.row()
        if chosen is not None:  # open loop: committed, not measured
            rec.outcome, rec.after = ("accepted", chosen.after.row()) if chosen.after else ("committed", None)
        rec.chosen, rec.G_after, rec.chars_after = chosen.j if chosen else None, size(new), char_stats(new)
        for c in cands:
            rec.candidates.append(self._record(c, skill0))
            entries.append(HistoryEntry(iteration=k, candidate=c.j, summary=c.summary, outcome=c.outcome,
                                        reason=c.reason, H_before=before.hard, C_before=before.cell,
                                        H_after=c.after.hard if c.after else None,
                                        C_after=c.after.cell if c.after else None,
                                        writes=c.patch.writes if c.patch else 0))
        return rec, entries

    # -- one candidate ---------------------------------------------------------------------------
    def _candidate(self, j: int, skill: Skill, before: Batch, feedback: str) -> Candidate:
        cand = Candidate(j)
        cand.diagnoses = self._diagnose(skill, before, feedback, j)
        if not cand.diagnoses:
            cand.refused = "no usable diagnosis"
            return cand
        patterns, cand.overlay = self._momentum(cand.diagnoses, feedback, j)
        self.state.patterns = patterns
        prompt = render_prompt(__package__, "patch", skill=render(skill), diagnoses=cand.diagnoses,
                               patterns=patterns, overlay=cand.overlay, history=self.history, feedback=feedback)
        reply = self.ctx.ask("patcher", prompt, sample_index=j - 1)
        if reply is None:
            cand.refused = "patcher call failed"
            return cand
        raw = reply.text
        parsed, why = adopt_patch(reply, skill)
        if isinstance(parsed, Patch):
            self.state.counters.writes += parsed.writes
            self.state.counters.chars_written += parsed.chars_written
        if why or not isinstance(parsed, Patch):
            self.ctx.reject("patch", raw, why)
            cand.refused = why
            return cand
        cand.patch = parsed
        return cand

    def _diagnose(self, skill: Skill, before: Batch, feedback: str, j: int) -> list[Diagnosis]:
        """One diagnosis per batch trajectory (failures and, as contrast, successes)."""
        prompts = [render_prompt(__package__, "diagnose", skill=render(skill), task=_task(r, TEXT_LIMIT),
                                 others=[_task(o, OTHER_LIMIT) for o in before.results if o.task.id != r.task.id],
                                 history=self.history, feedback=feedback) for r in before.results]
        # independent of one another: one batch, read in trajectory order
        replies = self.ctx.ask_many("diagnoser", prompts, sample_indices=[j - 1] * len(prompts))
        out = []
        for r, reply in zip(before.results, replies, strict=True):
            if reply is None:
                continue
            raw = reply.text
            self.state.counters.diagnoses += 1
            parsed, why = parse_diagnosis(reply)
            if parsed is None:
                self.ctx.reject("diagnosis", raw, why)
                continue
            text, change = parsed
            self.state.counters.diagnosis_chars += len(text) + len(change)
            out.append(Diagnosis(task=r.task.id, passed=r.passed, score=f"{r.score:.3f}", diagnosis=text,
                                 skill_change=change))
        return out

    def _momentum(self, diagnoses: list[Diagnosis], feedback: str, j: int) -> tuple[list[str], str]:
        """(updated persistent pattern record, this iteration's overlay); on malformed output the record stays."""
        patterns = list(self.state.patterns)
        prompt = render_prompt(__package__, "momentum", patterns=patterns, diagnoses=diagnoses, feedback=feedback,
                               max_patterns=self.cfg.max_patterns)
        reply = self.ctx.ask("diagnoser", prompt, sample_index=j - 1)
        if reply is None:
            return patterns, ""
        raw = reply.text
        obj = json_object(raw)
        why = _strings(obj, ("overlay",))
        new = obj.get("patterns") if isinstance(obj, dict) else None
        if not why and (not isinstance(new, list) or not all(isinstance(p, str) and p.strip() for p in new)):
            why = "'patterns' must be a list of non-empty strings"
        elif not why and isinstance(new, list) and len(new) > self.cfg.max_patterns:
            why = f"{len(new)} patterns; at most {self.cfg.max_patterns}"
        if not why and reply.cut_off:
            why = "momentum output cut off at max_tokens"
        if why or not isinstance(obj, dict) or not isinstance(new, list):
            self.ctx.reject("momentum", raw, why)
            return patterns, ""
        return [p.strip() for p in new], str(obj["overlay"]).strip()

    def _feedback(self, cand: Candidate) -> str:
        """Why candidate j did not end the search, for candidate j + 1's diagnosis and patch."""
        if cand.patch is None:
            return f"Candidate {cand.j} was refused before re-execution: {cand.refused}."
        if not cand.passed:
            return (f"Candidate {cand.j} ({cand.summary}) was REJECTED and rolled back after re-execution on this "
                    f"batch: {cand.reason}. Do not repeat that edit direction.")
        return (f"Candidate {cand.j} ({cand.summary}) passed the gate without a strict hard-accuracy gain "
                f"({cand.reason}); another candidate is tried.")

    def _choose(self, cands: list[Candidate]) -> Candidate | None:
        """Mark outcomes; return the adopted candidate (closed: best passing by (H, C), earliest on ties)."""
        if not self.cfg.closed:
            for c in cands:
                c.outcome = "committed" if c.patch else "malformed"
                c.reason = c.reason or c.refused
            return next((c for c in cands if c.patch), None)
        passing = [(c, c.after) for c in cands if c.passed and c.after is not None]
        chosen = max(passing, key=lambda ca: (_key(ca[1]), -ca[0].j))[0] if passing else None
        for c in cands:
            if c.patch is None:
                c.outcome, c.reason = "malformed", c.refused
            elif c is chosen:
                c.outcome = "accepted"
            elif c.passed:
                c.outcome = "not_selected"
                c.reason += f"; candidate {chosen.j if chosen else '?'} was better"
            else:
                c.outcome = "rejected"
        return chosen

    def _record(self, c: Candidate, skill0: Skill) -> CandidateRecord:
        rec = CandidateRecord(candidate=c.j, summary=c.summary, outcome=c.outcome, reason=c.reason,
                              after=c.after.row() if c.after else None, passed_gate=c.passed,
                              diagnoses=c.diagnoses, overlay=c.overlay)
        if c.patch is not None:
            new = c.patch.skill
            rec.written, rec.deleted, rec.writes = list(c.patch.written), list(c.patch.deleted), c.patch.writes
            rec.chars_written, rec.G_after, rec.chars_after = c.patch.chars_written, size(new), char_stats(new)
            rec.diff = skill_diff(skill0, new)
        return rec


def set_skill(ctx: PracticeContext, old: Mapping[str, str], new: Mapping[str, str]) -> None:
    """Make the harness's skill files equal `new` (through the harness write API)."""
    for path in old:
        if path not in new:
            ctx.harness.delete(f"{ROOT}/{path}")
    for path, text in new.items():
        if old.get(path) != text:
            ctx.harness.write(f"{ROOT}/{path}", text)
