"""The `continual_harness` method: one practice step is one episode on the train game, played by the episode agent
(the solver acts; at the cadence's steps the refiner edits prompt, skills and memory in place); the harness the
episode ends with — refinements, reverts and the carry-over — is written back, so every practice step saves the
refined harness as a version and the next episode continues from it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, field_validator

from evoarena.api import Method, PracticeContext, TaskView, method
from evoarena.api.episode_agent import EpisodeAgent
from evoarena.api.method_base import harness_toml
from evoarena.envs.metrics import auc, late_mean
from evoarena.harness import HarnessWorkspace, Manifest
from evoarena.methods.continual_harness.agent import ContinualAgent
from evoarena.methods.continual_harness.cadence import Cadence
from evoarena.methods.continual_harness.refiner import PASSES, Config
from evoarena.methods.continual_harness.state import (
    DEFAULT_PROMPT,
    LOG,
    PROMPT,
    ClockWindow,
    Log,
    LogEntry,
    RefinementRecord,
    entries,
    read_carry,
    read_log,
)
from evoarena.methods.continual_harness.stuck import StepRec, stuck_flags, window_stats
from evoarena.methods.prompting import render_prompt
from evoarena.models import GenParams


@method("continual_harness")
class ContinualHarness(Method):
    """Continual Harness (Karten et al., arXiv 2605.09998; sethkarten/pokeagent-speedrun): reset-free in-episode
    refinement of prompt, skills and memory at the released cadence, with auto-revert of skills whose stuck rate
    rose. docs/methods/continual_harness.md."""

    roles = ("solver", "refiner")

    class Params(Method.Params):
        clock: Literal["run", "episode"] = Field("run", description="What the refinement cadence counts: the "
                                                 "harness's age over the run, or steps of the current episode.")
        warmup: int = Field(10, ge=0, description="Steps before the first refinement.")
        early_every: int = Field(10, ge=1, description="Refinement period until `early_until`.")
        early_until: int = Field(200, ge=0, description="Age at which the late period starts.")
        late_every: int = Field(25, ge=1, description="Refinement period after `early_until`.")
        every: int | None = Field(None, ge=1, description="F: null = the released schedule; F ≥ 1 replaces both "
                                                          "periods, after the same warm-up.")
        window: int | None = Field(None, ge=1, description="Steps a refinement reads: null = F when set, else 10.")
        memory_window: int = Field(20, ge=1, description="Memory entries shown to the refiner.")
        passes: list[str] = Field(default_factory=lambda: list(PASSES), description="The refiner's passes, in order: "
                                  "one or more of `prompt`, `skills`, `memory`.")
        stuck: Literal["no_effect", "repeat"] = Field("no_effect", description="What counts as a stuck step.")
        revert_threshold: int = Field(15, description="A skill whose stuck rate rose by more points than this after "
                                                      "its change is reverted.")
        revert_min_steps: int = Field(3, ge=1, description="Steps under a changed skill before it may be reverted.")
        flag_threshold: int = Field(50, description="Stuck % at which a window is flagged to the refiner.")
        refine_in_test: bool = Field(True, description="Refine inside val and test episodes too (their edits end "
                                                       "with the episode); false freezes the harness at test.")
        refine_max_tokens: int = Field(2048, ge=1, description="The refiner's reply cap.")
        refine_temperature: float | None = Field(None, description="The refiner's temperature (null: the role's "
                                                                   "default).")
        summaries: int = Field(3, ge=0, description="Earlier episode summaries shown to the refiner.")
        initial_prompt: str = Field(DEFAULT_PROMPT, description="The strategic prompt the harness starts with.")

        @field_validator("passes")
        @classmethod
        def _buildable(cls, passes: list[str]) -> list[str]:
            if "subagents" in passes:
                raise ValueError("'subagents' needs an environment that offers tools (the released sub-agents call "
                                 "game tools); ours offer none, so the pass is not built")
            if not passes or any(x not in PASSES for x in passes):
                raise ValueError(f"one or more of {', '.join(PASSES)}, got {passes}")
            return passes

    params: Params

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        p = self.params
        every = p.every
        self.config = Config(
            cadence=Cadence(p.warmup, p.early_every, p.early_until, p.late_every, every),
            clock=p.clock, window=p.window or every or 10, memory_window=p.memory_window,
            passes=tuple(p.passes), stuck=p.stuck, revert_threshold=p.revert_threshold,
            revert_min_steps=p.revert_min_steps, flag_threshold=p.flag_threshold,
            max_tokens=p.refine_max_tokens,
            temperature=p.refine_temperature,
            summaries=p.summaries)

    @classmethod
    def state_view(cls, tree: Mapping[str, str]) -> dict[str, Any]:
        log = read_log(tree).root
        scores = [e.score for e in log]
        return {"episodes": len(log), "age": read_carry(tree).age, "scores": scores,
                "auc": auc(scores, 1.0), "late_mean": late_mean(scores),
                "refinements": sum(e.refinements for e in log),
                "reverted": sum(len(e.reverted) for e in log),
                "skills": sorted(entries(tree, "skills")), "memory": sorted(entries(tree, "memory"))}

    def initialize(self, ws: HarnessWorkspace, system_prompt: str, solver_params: GenParams) -> None:
        ws.write("system.md", system_prompt)
        ws.write(PROMPT, self.params.initial_prompt.strip() + "\n")
        ws.write("harness.toml", harness_toml(solver_params))

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        """The strategic guidance, the skill library and the memory, in front of every step's text."""
        return render_prompt(__package__, "context", prompt=tree.get(PROMPT, "").strip(),
                             skills=list(entries(tree, "skills").items()),
                             memory=list(entries(tree, "memory").items())).strip()

    def episode_agent(self, tree: Mapping[str, str], task: TaskView) -> EpisodeAgent | None:
        train = task.split == "train"
        return ContinualAgent(self.config, tree, task, refine=train or self.params.refine_in_test,
                              persist=train)

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        before = ctx.harness.tree()
        log = read_log(before).root
        attempt = ctx.solve(task)
        if attempt.error:  # a provider error: the unit is redone or recorded, nothing is kept
            return None
        fb = ctx.feedback(task, attempt)
        after = attempt.tree_after or {}
        changed = sorted(p for p, text in after.items() if before.get(p) != text)
        for path in changed:
            ctx.harness.write(path, after[path])
        trace = _trace(attempt.answer)
        refinements = [RefinementRecord.model_validate(s["agent"]["refinement"]) for s in trace
                       if "refinement" in (s.get("agent") or {})]
        at_end = read_carry(after).at_end if after else None
        if at_end:
            refinements.append(at_end)
        rejected = _record_rejections(ctx, refinements)
        flags = stuck_flags(_records(trace), self.config.stuck)
        entry = LogEntry(episode=len(log) + 1, score=float(fb.score), won=bool(fb.passed), steps=len(trace),
                         age=read_carry(after).age if after else read_carry(before).age,
                         refinements=len(refinements), at=[r.clock for r in refinements],
                         reverted=[s for r in refinements for s in r.reverted], rejected=rejected,
                         prompt_rewrites=sum(r.passes["prompt"].status == "rewritten" for r in refinements
                                             if "prompt" in r.passes),
                         stuck=window_stats(flags), windows=[ClockWindow(clock=r.clock, **r.window)
                                                             for r in refinements],
                         changed=[p for p in changed if not p.startswith("continual/")])
        log.append(entry)
        ctx.harness.save_state(LOG, Log(log))
        scores = [e.score for e in log]
        ctx.log("continual_episode", {**entry.model_dump(), "auc": auc(scores, 1.0), "late_mean": late_mean(scores)})
        edited = ", ".join(entry.changed) or "no refinable file"
        return Manifest(intent=f"Continual Harness episode {entry.episode}: {len(refinements)} refinement(s), "
                               f"{len(entry.reverted)} skill revert(s); changed {edited}",
                        evidence=f"{fb.message}; stuck {entry.stuck['pct']}% of {entry.stuck['steps']} steps")


def _trace(answer: str | None) -> list[dict[str, Any]]:
    try:
        return list(json.loads(answer or "{}").get("trace", []))
    except (ValueError, TypeError, AttributeError):
        return []


def _records(trace: list[dict[str, Any]]) -> list[StepRec]:
    """The episode's environment steps as `StepRec`s (the first step's observation before is not in the trace)."""
    out: list[StepRec] = []
    before: str | None = None
    score = 0.0
    for s in trace:
        if s.get("kind", "env") != "env":
            continue
        offered = s.get("admissible")
        out.append(StepRec(len(out), str(s["action"]), before, str(s["observation"]), float(s["score"]) - score,
                           tuple(offered) if offered is not None else None))
        before, score = str(s["observation"]), float(s["score"])
    return out


def _record_rejections(ctx: PracticeContext, refinements: list[RefinementRecord]) -> int:
    """Every malformed refiner reply and every refused entry of the episode as a rejected output; their count."""
    n = 0
    for r in refinements:
        for name, result in r.passes.items():
            if result.status == "rejected":
                ctx.reject(f"refiner {name} reply", result.raw or "", result.reason or "", role="refiner")
                n += 1
            for refused in result.refused or []:
                ctx.reject(f"refiner {name} entry", refused.entry, refused.reason, part=True,
                           role="refiner")
                n += 1
    return n
