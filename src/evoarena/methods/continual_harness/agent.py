"""The episode agent: the solver acts on the harness's own step prompt, and at the cadence's steps the refiner edits
the harness in place (`ctx.edit`) so the rest of the same episode runs under the refined harness — reset-free. A
refinement due after the episode's last step runs in `end` in practice (its edits carry to the next episode); in val
and test it is skipped, since nothing after the episode would see it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evoarena.api import AgentAction, EpisodeAgent, EpisodeContext, EpisodeEnd, EpisodeView, TaskView
from evoarena.harness.state import state_text
from evoarena.methods.continual_harness.cadence import refines_at
from evoarena.methods.continual_harness.refiner import Config, Refinement
from evoarena.methods.continual_harness.state import CARRY, RefinementRecord, Watch, read_carry
from evoarena.methods.continual_harness.stuck import StepRec, stuck_flags


class ContinualAgent(EpisodeAgent):
    """Acts and refines in one episode. `refine`: whether the refiner runs in this episode; `persist`: whether the
    episode's harness goes on after it (practice), so the carry-over is written and a refinement after the last step
    is worth making."""

    def __init__(self, config: Config, tree: Mapping[str, str], task: TaskView, *, refine: bool,
                 persist: bool) -> None:
        carry = read_carry(tree)
        self.cfg, self.task, self.refine, self.persist = config, task, refine, persist
        self.age = carry.age  # steps the harness has played before this episode
        self.watches: list[Watch] = list(carry.watches)
        self.summaries: list[str] = list(carry.summaries)
        self.records: list[StepRec] = []
        self.score_before = 0.0  # the score when the pending step was chosen
        # the step chosen last, until its result is known: action, observation before, actions offered, reply
        self.pending: tuple[str, str | None, tuple[str, ...] | None, str] | None = None
        self.refinements: list[RefinementRecord] = []

    def clock(self, step: int) -> int:
        """The cadence's clock after `step` steps of this episode: the harness's whole age (`run`) or the episode's
        own count (`episode`)."""
        return self.age + step if self.cfg.clock == "run" else step

    def act(self, view: EpisodeView, ctx: EpisodeContext) -> AgentAction:
        self._close_pending(view.history[-1].observation if view.history else None, view.score)
        info: dict[str, Any] = {}
        calls: dict[str, int] = {}
        if self.refine and view.step >= 1 and refines_at(self.clock(view.step), self.cfg.cadence):
            record = self._refine(ctx, view.step, view.score)
            info["refinement"] = record.model_dump()
            calls["refiner"] = record.calls
        note = "\n\n".join(s for s in self.summaries if s)
        completion = ctx.model("solver").complete(ctx.step_messages(view, note=note), ctx.solver_params,
                                                  sample_index=ctx.sample_index)
        action = ctx.parse(completion.text).answer or ""
        before = view.observation
        self.pending = (action, before, view.admissible, completion.text)
        self.score_before = view.score
        calls["solver"] = 1
        return AgentAction(action, calls, info)

    def end(self, outcome: EpisodeEnd, ctx: EpisodeContext) -> None:
        self._close_pending(None, outcome.final_score)
        steps = len(outcome.actions)
        at_end = None
        if self.refine and self.persist and steps >= 1 and refines_at(self.clock(steps), self.cfg.cadence):
            at_end = self._refine(ctx, steps, outcome.final_score)
        if self.persist:
            carry = read_carry(ctx.tree)
            carry.age, carry.watches, carry.summaries, carry.at_end = (self.age + steps, self.watches,
                                                                       self.summaries, at_end)
            ctx.edit(CARRY, state_text(carry))  # the episode's context edits files: the one JSON form by hand

    # -- internals ------------------------------------------------------------------------------------------------
    def _close_pending(self, after: str | None, score: float) -> None:
        """The step chosen last time, now that its result is known (None: the episode ended, its last observation
        is not shown to the agent)."""
        if self.pending is None:
            return
        action, before, offered, reply = self.pending
        self.records.append(StepRec(len(self.records), action, before, after, score - self.score_before, offered,
                                    reply))
        self.pending = None

    def _refine(self, ctx: EpisodeContext, step: int, score: float) -> RefinementRecord:
        flags = stuck_flags(self.records, self.cfg.stuck)
        refinement = Refinement(ctx, self.cfg, self.task.prompt, step=step, clock=self.clock(step),
                                records=self.records, flags=flags, score=score, watches=self.watches)
        record = refinement.run()
        self.watches = refinement.new_watches
        if record.summary:
            kept = self.cfg.summaries
            self.summaries = (self.summaries + [record.summary])[-kept:] if kept else []
        self.refinements.append(record)
        return record
