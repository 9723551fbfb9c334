"""BPE's episode agent: each step it renders H_t = (B_t, P_t, E_t) — the belief as last tracked, the committed
subgoals, the last recalled experience and this episode's notes — with the help of the enabled meta-actions in front
of the harness's step prompt, asks the solver once, and reads the reply as a meta-action `track[…]`, `commit[…]`,
`recall[…]`, `note[…]` (answered here; each spends a step of the shared budget) or as an environment action.

The belief is updated in the background from every environment step (belief.py, no model call) but shown only after
`track`. The experience bank is read-only during the episode except for the usage counts `recall` raises; in the
`evolving` mode those counts are written back into the harness at `end()` (`ctx.edit`), so they come back with the
attempt and the method keeps them; `frozen` never writes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evoarena.api import AgentAction, EpisodeAgent, EpisodeContext, EpisodeEnd, EpisodeView
from evoarena.methods.bpe.belief import Belief
from evoarena.methods.bpe.experience import Bank, render
from evoarena.methods.bpe.goal import goal
from evoarena.methods.prompting import render_prompt

STATUSES = ("tried", "todo", "blocked")
_ACTION_TAG = re.compile(r"<action>\s*(.*?)\s*(?:</action>|$)", re.S | re.I)
_META = re.compile(r"^\s*(track|commit|recall|note)\s*\[(.*)$", re.S | re.I)


@dataclass(frozen=True)
class Config:
    """What the agent offers: the three components (the ablations turn one off with its meta-actions and its
    block), whether recall usage is written back (`evolving`), the progress cap and recall's k."""

    belief: bool = True
    progress: bool = True
    experience: bool = True
    evolving: bool = True
    progress_cap: int = 8
    recall_k: int = 3

    @property
    def meta_actions(self) -> tuple[str, ...]:
        return (("track",) if self.belief else ()) + (("commit",) if self.progress else ()) + (
            ("recall", "note") if self.experience else ())


class Progress:
    """P_t: the committed subgoals with a status each (tried / todo / blocked), at most `cap`; committing a subgoal
    already listed changes its status, a new one past the cap is refused."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.items: list[list[str]] = []

    def commit(self, argument: str) -> str:
        text, _, status = argument.rpartition(":")
        if not text.strip():  # no status given: a new subgoal is to do
            text, status = argument, "todo"
        subgoal, status = " ".join(text.split()), status.strip().lower()
        if not subgoal:
            return "Nothing committed: write commit[<subgoal>: tried|todo|blocked]."
        if status not in STATUSES:
            return f"Nothing committed: the status must be one of {', '.join(STATUSES)} (got {status!r})."
        for item in self.items:
            if item[0].lower() == subgoal.lower():
                item[1] = status
                return f"Progress updated: {subgoal} -> {status}.\n{self.render()}"
        if len(self.items) >= self.cap:
            return (f"Nothing committed: progress holds its maximum of {self.cap} subgoals; change the status of one "
                    f"of them instead.\n{self.render()}")
        self.items.append([subgoal, status])
        return f"Progress: {subgoal} -> {status}.\n{self.render()}"

    def render(self) -> str:
        if not self.items:
            return f"Progress (0/{self.cap}): no subgoal committed yet."
        lines = [f"Progress ({len(self.items)}/{self.cap}):"]
        lines += [f"  {i}. {s} — {st}" for i, (s, st) in enumerate(self.items, 1)]
        return "\n".join(lines)


class BPEAgent(EpisodeAgent):
    """One episode of BPE (see the module doc). `bank` is the harness's experience (None without Experience)."""

    def __init__(self, config: Config, bank: Bank | None) -> None:
        self.config, self.bank = config, bank
        self.meta_actions = config.meta_actions
        self.belief = Belief()
        self.progress = Progress(config.progress_cap)
        self.notes: list[str] = []
        self.tracked: tuple[int, str, str] | None = None  # (step, what, the answer)
        self.recalled: tuple[int, str, list[str]] | None = None  # (step, query, lines)
        self.seen = 0  # history turns read into the belief
        self.goal = ""
        self.usage_changed = False

    # -- the step ------------------------------------------------------------------------------------------------
    def act(self, view: EpisodeView, ctx: EpisodeContext) -> AgentAction:
        info: dict[str, Any] = {}
        if view.step == 0:
            found = goal(view.start or view.observation)
            self.goal = found.text
            info = {"task_type": found.kind, "goal": found.text, "start": view.start or view.observation}
        self._observe(view)
        messages = ctx.step_messages(view, note=self.state_block(view))
        completion = ctx.model("solver").complete(messages, ctx.solver_params, sample_index=ctx.sample_index)
        return AgentAction(self.read(completion.text, ctx), {"solver": 1}, info)

    def read(self, text: str, ctx: EpisodeContext) -> str:
        """The action of a reply: an enabled meta-action on its first line (or in `<action>…</action>`, the paper's
        format) in its canonical form `name[argument]` — a reply cut off before its closing bracket keeps what it
        has — else the benchmark's reading of the reply (of the tag's content when there is one)."""
        tagged = _ACTION_TAG.search(text)
        raw = tagged.group(1) if tagged else next((x for x in text.strip().splitlines() if x.strip()), "")
        m = _META.match(raw.strip().lstrip(">").strip())
        if m is not None and m.group(1).lower() in self.meta_actions:
            argument = m.group(2).strip()
            argument = argument[:-1].strip() if argument.endswith("]") else argument
            return f"{m.group(1).lower()}[{argument}]"
        return ctx.parse(raw if tagged else text).answer or ""

    def _observe(self, view: EpisodeView) -> None:
        """Feed the belief every environment step it has not read (the first text at step 0)."""
        if view.step == 0:
            self.belief.observe(None, view.observation)
        for turn in view.history[self.seen:]:
            if turn.kind == "env":
                self.belief.observe(turn.action, turn.observation)
        self.seen = len(view.history)

    # -- meta-actions ----------------------------------------------------------------------------------------------
    def meta(self, name: str, argument: str, view: EpisodeView, ctx: EpisodeContext) -> str:
        if name == "track":
            what = argument.strip() or "world"
            answer = (f"Belief (world):\n{self.belief.world()}" if what.lower() == "world"
                      else f"Belief ({what}): {self.belief.describe(what)}")
            self.tracked = (view.step, what, answer)
            return answer
        if name == "commit":
            return self.progress.commit(argument)
        if name == "recall":
            return self._recall(argument.strip() or self.goal, view.step)
        if name == "note":
            if not argument.strip():
                return "Nothing noted: write note[<insight>]."
            self.notes.append(" ".join(argument.split()))
            return f"Noted ({len(self.notes)} note(s) this episode; kept for later episodes if consolidation keeps it)."
        raise ValueError(f"BPE has no meta-action {name!r}")

    def _recall(self, query: str, step: int) -> str:
        assert self.bank is not None
        found = self.bank.recall(query, self.config.recall_k)
        self.usage_changed = self.usage_changed or bool(found)
        lines = render(found)
        self.recalled = (step, query, lines)
        if not lines:
            return f"Experience: nothing matches {query!r}."
        return f"Experience for {query!r}:\n" + "\n".join(lines)

    # -- H_t as the solver sees it -----------------------------------------------------------------------------
    def state_block(self, view: EpisodeView) -> str:
        c = self.config
        parts = ["Harness state:"]
        if c.belief:
            parts.append(f"Belief (track at step {self.tracked[0]}, {self.tracked[1]}):\n{_body(self.tracked[2])}"
                         if self.tracked else "Belief: not shown until you track (track[world] or track[<object>]).")
        if c.progress:
            parts.append(self.progress.render())
        if c.experience:
            if self.recalled is None:
                parts.append("Experience: nothing recalled yet (recall[<keywords>]).")
            else:
                step, query, lines = self.recalled
                parts.append(f"Experience (recall at step {step}, {query!r}):\n" +
                             ("\n".join(f"  {x}" for x in lines) if lines else "  nothing matched"))
            if self.notes:
                parts.append("Notes this episode: " + " | ".join(self.notes))
        help_text = render_prompt(__package__, "help", belief=c.belief, progress=c.progress, experience=c.experience,
                                  cap=c.progress_cap, k=c.recall_k).strip()
        return "\n".join(parts) + "\n\n" + help_text

    # -- after the episode -----------------------------------------------------------------------------------------
    def end(self, outcome: EpisodeEnd, ctx: EpisodeContext) -> None:
        """Evolving: the usage counts `recall` raised go back into the experience files (frozen: nothing)."""
        if self.bank is None or not self.config.evolving or not self.usage_changed:
            return
        for file, text in self.bank.files().items():
            if ctx.tree.get(file, "") != text:
                ctx.edit(file, text)


def _body(answer: str) -> str:
    lines = answer.split("\n", 1)
    body = lines[1] if len(lines) > 1 else lines[0].split(": ", 1)[-1]
    return "\n".join(f"  {x}" for x in body.splitlines())


def recalled_ids(observation: str) -> list[str]:
    """The entry ids a recall's answer showed (`[g3] (general) …` lines)."""
    return re.findall(r"^\[([gtms]\d+)\] ", observation, re.M)


def usage_from(tree_after: Mapping[str, str] | None) -> dict[str, int] | None:
    """The usage counts an evolving episode wrote back (None when it wrote nothing)."""
    if tree_after is None:
        return None
    return {e.id: e.usage for e in Bank.from_tree(tree_after).entries()}
