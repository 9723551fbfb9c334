"""One refinement, in the released order (`HarnessEvolver.evolve`): measure the stuck rate of the recent window,
auto-revert the skills changed at the previous refinement whose stuck rate rose, then the passes — strategic prompt,
skills, memory (sub-agents need tools, which our environments do not offer) — each its own refiner call, each
isolated: a malformed reply is recorded and changes nothing, the other passes still run. Edits go through
`ctx.edit`, so the same episode goes on under the refined harness."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from evoarena.api import EpisodeContext
from evoarena.methods.continual_harness.cadence import Cadence
from evoarena.methods.continual_harness.reply import Edits, ReplyError, parse_memory, parse_prompt, parse_skills
from evoarena.methods.continual_harness.state import (
    PROMPT,
    SYSTEM,
    Check,
    PassResult,
    RefinementRecord,
    Refused,
    Watch,
    entries,
    memory_path,
    refinable,
    skill_path,
)
from evoarena.methods.continual_harness.stuck import StepRec, revert_due, verdict, window_stats
from evoarena.methods.continual_harness.trajectory import format_window
from evoarena.methods.prompting import render_prompt
from evoarena.models import Message

PASSES = ("prompt", "skills", "memory")
RAW_CHARS = 4000  # a rejected reply is kept in the step's trace up to this length


@dataclass(frozen=True)
class Config:
    """The method's params as the agent uses them (see `ContinualHarness.defaults`)."""

    cadence: Cadence = Cadence()
    clock: str = "run"
    window: int = 10
    memory_window: int = 20
    passes: tuple[str, ...] = PASSES
    stuck: str = "no_effect"
    revert_threshold: int = 15
    revert_min_steps: int = 3
    flag_threshold: int = 50
    max_tokens: int = 2048
    temperature: float | None = None
    summaries: int = 3


class Refinement:
    """One pass of the refiner at `step` of the episode (`clock` on the cadence's clock) over the episode's records
    so far and their stuck flags; `watches`: the skills changed at the previous refinement."""

    def __init__(self, ctx: EpisodeContext, config: Config, goal: str, *, step: int, clock: int,
                 records: Sequence[StepRec], flags: Sequence[bool], score: float,
                 watches: Sequence[Watch]) -> None:
        self.ctx, self.cfg, self.goal = ctx, config, goal
        self.records, self.flags = list(records[-config.window:]), list(flags[-config.window:])
        self.score = score
        self.stats = window_stats(self.flags)
        self.record = RefinementRecord(step=step, clock=clock, window=self.stats)
        self.watches = list(watches)
        self.new_watches: list[Watch] = []

    def run(self) -> RefinementRecord:
        feedback = self._revert()
        runners: dict[str, Callable[[], None]] = {"prompt": self._prompt, "skills": lambda: self._skills(feedback),
                                                  "memory": self._memory}
        for name in PASSES:
            if name in self.cfg.passes:
                runners[name]()
        self.record.summary = self._summary()
        return self.record

    # -- the revert step ------------------------------------------------------------------------------------------
    def _revert(self) -> str:
        """Resolve the watched skills against this window; revert a changed one whose stuck rate rose. Returns the
        released "Impact of previous evolution changes" lines for the skills pass."""
        lines: list[str] = []
        for w in self.watches:
            before, after, sid = w.before, self.stats, w.id
            due = revert_due(before, after, threshold=self.cfg.revert_threshold,
                             min_steps=self.cfg.revert_min_steps)
            live = self.ctx.tree.get(w.path) == w.text
            reverted = due and live and w.previous is not None
            if reverted and w.previous is not None:
                self.ctx.edit(w.path, w.previous)
                self.record.reverted.append(sid)
            self.record.checked.append(Check(skill=sid, new=w.previous is None, before=before, after=after,
                                             due=due, reverted=reverted))
            if before["steps"] == 0:
                continue
            delta = after["pct"] - before["pct"]
            line = f"- {sid}: stuck rate {before['pct']}% -> {after['pct']}% ({delta:+d}pp), {verdict(before, after)}"
            if reverted:
                line += ". It was auto-reverted to its previous version."
            elif due:
                line += " (a new skill has no previous version to revert to)."
            lines.append(line)
        changed = [w.id for w in self.watches]
        if lines and changed:
            lines.append(f"\nPrevious changes were: skills {', '.join(changed)}")
        return "\n".join(lines)

    # -- the passes -----------------------------------------------------------------------------------------------
    def _call(self, template: str, **values: Any) -> tuple[str, bool]:
        handle = self.ctx.model("refiner")
        params = replace(handle.default_params, max_tokens=self.cfg.max_tokens)
        if self.cfg.temperature is not None:
            params = replace(params, temperature=self.cfg.temperature)
        text = render_prompt(__package__, template, goal=self.goal, **values)
        completion = handle.complete([Message("user", text)], params, sample_index=self.ctx.sample_index)
        self.record.calls += 1
        return completion.text, completion.finish_reason == "length"

    def _window(self, n: int | None = None) -> tuple[str, int]:
        records = self.records[-n:] if n else self.records
        flags = self.flags[-n:] if n else self.flags
        return format_window(records, flags, self.score), len(records)

    def _reject(self, name: str, raw: str, err: ReplyError, cut_off: bool) -> None:
        reason = str(err) + (" (the reply was cut off at max_tokens)" if cut_off else "")
        self.record.passes[name] = PassResult(status="rejected", reason=reason, raw=raw[:RAW_CHARS])

    def _prompt(self) -> None:
        trajectory, steps = self._window()
        current = self.ctx.tree.get(PROMPT, "").strip()
        raw, cut = self._call("refine_prompt", system=self.ctx.tree.get(SYSTEM, "").strip(),
                              prompt=current, steps=steps, trajectory=trajectory)
        try:
            new = parse_prompt(raw)
        except ReplyError as err:
            self._reject("prompt", raw, err, cut)
            return
        if new == current:
            self.record.passes["prompt"] = PassResult(status="unchanged")
            return
        self._edit(PROMPT, new + "\n")
        self.record.passes["prompt"] = PassResult(status="rewritten", chars=len(new))

    def _skills(self, feedback: str) -> None:
        trajectory, steps = self._window()
        current = entries(self.ctx.tree, "skills")
        underperforming = ""
        if current and self.stats["steps"] >= self.cfg.revert_min_steps and \
                self.stats["pct"] >= self.cfg.flag_threshold:
            self.record.flagged = sorted(current)
            underperforming = (f"The last {self.stats['steps']} steps were {self.stats['pct']}% stuck "
                               f"({self.stats['stuck']} steps) with these skills in force: "
                               f"{', '.join(sorted(current))}. Rewrite them with a better procedure.")
        library = "\n\n".join(f"[{sid}]\n{text.strip()}" for sid, text in current.items())
        raw, cut = self._call("refine_skills", feedback=feedback, library=library, steps=steps,
                              trajectory=trajectory, underperforming=underperforming)
        try:
            edits = parse_skills(raw, current)
        except ReplyError as err:
            self._reject("skills", raw, err, cut)
            return
        for sid, text in edits.files.items():
            path = skill_path(sid)
            previous = self.ctx.tree.get(path)
            self._edit(path, text)
            self.new_watches.append(Watch(id=sid, path=path, previous=previous, text=text, before=self.stats,
                                          clock=self.record.clock))
        self.record.passes["skills"] = self._applied(edits)

    def _memory(self) -> None:
        trajectory, steps = self._window(min(self.cfg.memory_window, self.cfg.window))
        current = entries(self.ctx.tree, "memory")
        overview = "\n\n".join(f"[{mid}]\n{text.strip()}" for mid, text in current.items())
        raw, cut = self._call("refine_memory", memory=overview, steps=steps, trajectory=trajectory)
        try:
            edits = parse_memory(raw, current)
        except ReplyError as err:
            self._reject("memory", raw, err, cut)
            return
        for mid, text in edits.files.items():
            self._edit(memory_path(mid), text)
        self.record.passes["memory"] = self._applied(edits)

    def _edit(self, path: str, text: str) -> None:
        if not refinable(path):  # ids are slugs, so this holds; kept as the one gate every refiner edit passes
            raise ValueError(f"the refiner may not write {path!r}")
        self.ctx.edit(path, text)

    @staticmethod
    def _applied(edits: Edits) -> PassResult:
        status = "applied" if edits.files else "unchanged"
        refused = [Refused(entry=e, reason=r) for e, r in edits.refused] or None
        return PassResult(status=status, added=edits.added, updated=edits.updated, analysis=edits.analysis[:500],
                          refused=refused)

    def _summary(self) -> str:
        """The released `_inject_evolution_summary`: what changed, shown to the solver on the following steps."""
        lines = ["HARNESS EVOLUTION completed. Changes to your toolkit:"]
        for name, label in (("skills", "Skills"), ("memory", "Memory")):
            data = self.record.passes[name].model_dump() if name in self.record.passes else {}
            parts = [f"{k}: {data[k]}" for k in ("added", "updated") if data.get(k)]
            if parts:
                lines.append(f"  {label}: {', '.join(parts)}")
                if data.get("analysis"):
                    lines.append(f"    Reason: {str(data['analysis'])[:200]}")
        prompt = self.record.passes.get("prompt")
        if prompt is not None and prompt.status == "rewritten":
            lines.append("  Strategic prompt: rewritten based on trajectory analysis")
        if len(lines) == 1:
            return ""
        lines.append("Review the updated STRATEGIC GUIDANCE, SKILL LIBRARY and MEMORY below.")
        return "\n".join(lines)
