"""`skillprox`: self-evolving agent skills via closed-loop forward updates and a validation-gated Prox step.

State: `memory/skillprox/state.json` (the plan: phase, batch schedule, iteration, all-correct streak, momentum
pattern record, counters) plus append-only records for the paper's analyses: `history.jsonl` (every candidate
update with its outcome and measured H/C), `iterations.jsonl` (per iteration: batch, H/C before/after, candidates,
diagnoses, momentum overlay, unified diffs, characters of SKILL.md vs references) and `prox.json` (unit list with
utilities, candidate order, shrinker edits and verdicts). The live skill is `skills/skillprox/SKILL.md` and
`skills/skillprox/references/*.md`.

Protocol mapping (docs/methods/skillprox.md): the first practice step evaluates X_0 on the train tasks and plans
batches from up to `max_train` initially failing ones, then runs iteration 1; each later step runs one iteration;
once the forward phase ends (planned iterations or early stop) the next step runs Prox on the val split; later
steps only log a skip. Every solver run inside the method is a rollout; under the curriculum the step first
submits one attempt with the live skill, batches are drawn from the episode's stages and V is those stages.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field, field_validator

from evoarena.api import Method, PracticeContext, Probe, ProbeExample, TaskView, method
from evoarena.harness import HarnessWorkspace, Manifest
from evoarena.methods.front_matter import strip_front_matter
from evoarena.methods.prompting import render_prompt
from evoarena.methods.skillprox.common import (
    HISTORY,
    ITERATIONS,
    PROX,
    STATE,
    TaskResult,
    evaluate,
    result_of,
)
from evoarena.methods.skillprox.forward import ForwardConfig, ForwardStep
from evoarena.methods.skillprox.probes import skillprox_probes
from evoarena.methods.skillprox.prox import ProxConfig, ProxStep
from evoarena.methods.skillprox.skill import (
    MAIN,
    ROOT,
    active_references,
    char_stats,
    size,
    skill_of,
    struct_problems,
)
from evoarena.methods.skillprox.state import ForwardEnd, HistoryEntry, Plan, State
from evoarena.models import GenParams

PROBE_PATCH_TOKENS = 1024
"""A probe patch edits the small initial skill; the spec's patcher default (sized for whole skill files) is capped."""

INITIAL_SKILL = {
    MAIN: (
        "---\nname: skillprox\ndescription: Procedures learned from practice on this kind of task.\n---\n"
        "# Skill\n\nApply the sections below when they fit the task.\n"
    )
}


def schedule(ids: Sequence[str], size: int, iterations: int, rng: random.Random) -> list[list[str]]:
    """`iterations` batches of `size` from `ids`: passes over a reshuffled copy, each cut into consecutive
    batches (the last batch of a pass may be smaller). 40 ids, size 4, 10 iterations: one pass, as the paper."""
    out: list[list[str]] = []
    while ids and len(out) < iterations:
        order = list(ids)
        rng.shuffle(order)
        out += [order[i : i + size] for i in range(0, len(order), size)]
    return out[:iterations]


def new_state(curriculum: bool) -> State:
    return State(curriculum=curriculum)


@method("skillprox")
class SkillProx(Method):
    roles = ("solver", "diagnoser", "patcher", "shrinker")
    skill_kind = "skill"

    class Params(Method.Params):
        forward: Literal["closed", "open"] = Field("closed", description="`closed`: re-execute each patch on its "
                                                   "batch and roll back if H or C drops; `open`: keep it (G1).")
        diagnosis: bool = Field(True, description="Measured outcomes reach the diagnoser (false with closed forward: "
                                                  "G2).")
        prox: bool = Field(True, description="The backward step: a leave-one-out audit and validation-gated shrink.")
        batch_size: int = Field(4, ge=1, description="Tasks per forward batch.")
        iterations: int = Field(10, ge=0, description="Planned forward iterations.")
        max_candidates: int = Field(3, ge=1, description="Patch candidates per iteration.")
        early_stop: int = Field(4, ge=1, description="Consecutive all-correct batches that end the forward phase.")
        max_train: int = Field(40, ge=1, description="Initially failing train tasks drawn.")
        history: int = Field(6, ge=0, description="Update summaries shown to the diagnoser and patcher.")
        max_patterns: int = Field(12, ge=1, description="Size of the momentum pattern record.")
        val_size: int = Field(20, ge=1, description="|V|, the validation tasks of Prox.")
        tau: float = Field(-0.001, description="τ: a unit whose u_cell is below it is a shrink candidate.")
        delta_h: float = Field(0.0, description="δ_h: the hard score on V an edit may lose.")
        delta_c: float = Field(0.02, description="δ_c: the cell score on V an edit may lose.")
        rho: float = Field(0.10, description="ρ: no new trial once compression against X_f reaches it.")
        initial_skill: dict[str, str] | None = Field(None, description="{path: text} of the starting skill; null: "
                                                                       "a front-matter-only SKILL.md.")

        @field_validator("initial_skill")
        @classmethod
        def _well_formed(cls, skill: dict[str, str] | None) -> dict[str, str] | None:
            problems = struct_problems(skill) if skill is not None else []
            if problems:
                raise ValueError("; ".join(problems))
            return skill

    params: Params

    @classmethod
    def skill_tree(cls, tree: Mapping[str, str]) -> dict[str, str] | None:
        """SkillProx's state is an Agent Skill already: its SKILL.md and the references it points to."""
        skill = skill_of(tree)
        _, body = strip_front_matter(skill.get(MAIN, ""))
        return {"SKILL.md": body.strip() + "\n" if body.strip() else "",
                **{p: skill[p] for p in active_references(skill)}}

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        skill = self.params.initial_skill if self.params.initial_skill is not None else INITIAL_SKILL
        self.initial_skill: dict[str, str] = {k: v.rstrip() + "\n" for k, v in skill.items()}

    def initialize(self, ws: HarnessWorkspace, system_prompt: str, solver_params: GenParams) -> None:
        super().initialize(ws, system_prompt, solver_params)
        for path, text in self.initial_skill.items():
            ws.write(f"{ROOT}/{path}", text)

    def probes(self, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
        """The diagnoser and the patcher on the initial skill (skillprox/probes.py)."""
        return skillprox_probes(self.initial_skill, examples, PROBE_PATCH_TOKENS)

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        """SKILL.md, then every reference it points to (pointer order) under a `Reference: <path>` header: the
        solver is single-turn, so "on demand" loading means every reachable reference is loaded."""
        skill = skill_of(tree)
        if MAIN not in skill:
            return ""
        refs = [{"path": p, "text": skill[p].strip()} for p in active_references(skill)]
        return render_prompt(__package__, "context", main=skill[MAIN].strip(), references=refs)

    # -- configuration -----------------------------------------------------------------------------
    @property
    def forward_config(self) -> ForwardConfig:
        p = self.params
        return ForwardConfig(closed=p.forward == "closed", diagnosis=p.diagnosis,
                             max_candidates=p.max_candidates, history=p.history,
                             max_patterns=p.max_patterns)

    @property
    def prox_config(self) -> ProxConfig:
        p = self.params
        return ProxConfig(tau=p.tau, delta_h=p.delta_h, delta_c=p.delta_c,
                          rho=p.rho)

    # -- one practice step ------------------------------------------------------------------------
    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        known: dict[str, TaskResult] = {}
        if ctx.attempt_limit is not None:  # the protocol counts submissions: submit once with the live skill
            known[task.id] = result_of(ctx, task, ctx.solve(task))
        state = ctx.harness.load_state(STATE, State, default=new_state(ctx.attempt_limit is not None))
        manifests: list[Manifest] = []
        did = False
        while not did:
            if state.phase == "forward":
                if not state.curriculum and state.batches is None:
                    known = self._plan(ctx, state)
                end = self._forward_over(state)
                if end:
                    self._end_forward(ctx, state, end)
                    continue
                manifests.append(self._iterate(ctx, state, self._batch(ctx, task, state), known))
                did = True
                end = self._forward_over(state)
                if end:
                    self._end_forward(ctx, state, end)
            elif state.phase == "prox":
                manifests.append(self._prox(ctx, state))
                did = True
            else:
                ctx.log("skillprox_skip", {"reason": "forward and Prox are done"})
                break
        ctx.harness.save_state(STATE, state)
        if not manifests:
            return None
        return Manifest(intent="; ".join(m.intent for m in manifests),
                        evidence="; ".join(m.evidence for m in manifests),
                        expected_fixes=[t for m in manifests for t in m.expected_fixes])

    def _plan(self, ctx: PracticeContext, state: State) -> dict[str, TaskResult]:
        """Evaluate X_0 on every train task; keep up to `max_train` initially failing ones; schedule the batches.
        Returns X_0's results (reused as iteration 1's "before", the same skill on the same tasks)."""
        p = self.params
        if p.iterations == 0:  # Prox only: no need to know which train tasks fail
            state.batches, state.plan = [], Plan(train=len(ctx.train), failing=None, selected=[])
            return {}
        before = evaluate(ctx, ctx.harness.tree(), ctx.train)
        failing = [r.task.id for r in before.results if not r.passed]
        picked = set(ctx.rng.sample(failing, p.max_train)) if len(failing) > p.max_train else set(failing)
        selected = [i for i in failing if i in picked]
        state.batches = schedule(selected, p.batch_size, p.iterations, ctx.rng)
        state.plan = Plan(train=len(ctx.train), failing=len(failing), selected=selected, H0=before.hard,
                          C0=before.cell)
        ctx.log("skillprox_plan", {**state.plan.model_dump(), "batches": state.batches})
        return {r.task.id: r for r in before.results}

    def _forward_over(self, state: State) -> str:
        if state.streak >= self.params.early_stop:
            return f"early stop: {state.streak} consecutive all-correct batches"
        planned = self.params.iterations if state.curriculum else len(state.batches or [])
        if state.iteration >= planned:
            if not state.curriculum and not (state.plan and state.plan.selected) and self.params.iterations > 0:
                return "no initially failing train task"
            return f"{state.iteration} iterations done"
        return ""

    def _batch(self, ctx: PracticeContext, task: TaskView, state: State) -> list[TaskView]:
        if state.curriculum:  # the step's stage first, then others of the episode so far
            others = [t for t in ctx.train if t.id != task.id]
            return [task, *ctx.rng.sample(others, min(self.params.batch_size - 1, len(others)))]
        by_id = {t.id: t for t in ctx.train}
        return [by_id[i] for i in (state.batches or [])[state.iteration]]

    def _iterate(self, ctx: PracticeContext, state: State, batch: list[TaskView],
                 known: Mapping[str, TaskResult]) -> Manifest:
        k = state.iteration + 1
        history = ctx.harness.load_records(HISTORY, HistoryEntry)
        rec, entries = ForwardStep(ctx, self.forward_config, state, history).run(k, batch, known)
        state.iteration = k
        for e in entries:
            ctx.harness.append_record(HISTORY, e)
        rec.patterns = list(state.patterns)
        ctx.harness.append_record(ITERATIONS, rec)
        for c in rec.candidates:
            ctx.log("skillprox_candidate", {"iteration": k, **c.model_dump(exclude={"diagnoses"}),
                                            "diagnoses": len(c.diagnoses)})
        ctx.log("skillprox_iteration", {
            "iteration": k, "batch": rec.batch, "outcome": rec.outcome, "chosen": rec.chosen,
            "H_before": rec.before.H, "C_before": rec.before.C,
            "H_after": rec.after.H if rec.after else None,
            "C_after": rec.after.C if rec.after else None,
            "candidates": len(rec.candidates), "G_before": rec.G_before, "G_after": rec.G_after,
            "chars_after": rec.chars_after, "streak": state.streak,
            "diagnoses": sum(len(c.diagnoses) for c in rec.candidates),
            "writes": sum(c.writes for c in rec.candidates)})
        before, after = rec.before, rec.after
        if after:
            measured = f"batch H {before.H:.2f} -> {after.H:.2f}, C {before.C:.3f} -> {after.C:.3f}"
            fixes = [t for t, r in before.tasks.items() if after.tasks[t].passed and not r.passed]
        else:
            measured = f"batch H {before.H:.2f}, C {before.C:.3f} (open loop: not re-executed)"
            fixes = []
        intent = {
            "all_correct": f"SkillProx forward {k}: batch all correct, no update",
            "accepted": f"SkillProx forward {k}: accept candidate {rec.chosen} of {len(rec.candidates)}",
            "committed": f"SkillProx forward {k} (open loop): commit the patch",
            "rolled_back": f"SkillProx forward {k}: {len(rec.candidates)} candidate(s) rejected, roll back",
            "no_valid_patch": f"SkillProx forward {k} (open loop): no well-formed patch to commit",
        }[rec.outcome]
        return Manifest(intent=intent, evidence=measured, expected_fixes=fixes)

    def _end_forward(self, ctx: PracticeContext, state: State, reason: str) -> None:
        c = state.counters
        skill = skill_of(ctx.harness.tree())

        def per(num: int, den: int) -> float | None:
            return num / den if den else None

        state.forward_end = ForwardEnd(
            reason=reason, iterations=state.iteration, update_iterations=c.update_iterations,
            accepted_iterations=c.accepted_iterations, candidates=c.candidates,
            diagnoses=c.diagnoses, writes=c.writes,
            accepted_share=per(c.accepted_iterations, c.update_iterations),
            candidates_per_update_iteration=per(c.candidates, c.update_iterations),
            writes_per_diagnosis=per(c.writes, c.diagnoses),
            chars_written_per_diagnosis=per(c.chars_written, c.diagnoses),
            diagnosis_chars_per_diagnosis=per(c.diagnosis_chars, c.diagnoses),
            G=size(skill), chars=char_stats(skill),
        )
        ctx.log("skillprox_forward_end", state.forward_end.model_dump())
        state.phase = "prox" if self.params.prox else "done"

    def _prox(self, ctx: PracticeContext, state: State) -> Manifest:
        pool = list(ctx.val or ctx.train)  # the curriculum has no val split: the episode's stages so far
        n = self.params.val_size
        if len(pool) > n:
            picked = set(ctx.rng.sample([t.id for t in pool], n))
            pool = [t for t in pool if t.id in picked]
        record = ProxStep(ctx, self.prox_config).run(pool)
        ctx.harness.save_state(PROX, record)
        s = record.summary
        state.prox = s.model_copy(update={"diff": None})
        state.phase = "done"
        return Manifest(
            intent=f"SkillProx Prox: {s.accepted} of {s.evaluated} evaluated shrink edit(s) accepted "
                   f"({s.units} units, {s.candidates} candidates)",
            evidence=f"G {s.G_f} -> {s.G_final} ({s.compression:.1%}); val H {s.baseline.H:.3f} -> "
                     f"{s.final.H:.3f}, C {s.baseline.C:.3f} -> {s.final.C:.3f}")
