"""The `jitrl` method: a practice step is one episode played by the JitRL agent over the step memory the harness
holds; the episode's steps, with their discounted returns (and, with `step_scores: evaluator`, the evaluator's
per-step scores), become the next version's memory files. In val and test the agent reads the memory and its
edits end with the episode: the harness under test does not learn between test tasks."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import evoarena.methods.jitrl.replies as replies
from evoarena.api import Attempt, EpisodeAgent, Method, PracticeContext, TaskView, method
from evoarena.envs.metrics import auc, late_mean
from evoarena.harness import HarnessWorkspace, Manifest
from evoarena.methods.jitrl.agent import JitRLAgent, Settings
from evoarena.methods.jitrl.core import JitRLConfig
from evoarena.methods.jitrl.memory import (
    EPISODES,
    ROWS,
    EpisodeLine,
    Row,
    episode_rows,
    last_episode,
    load_memory,
    read_episodes,
    read_rows,
    records,
    replace_last_episode,
)
from evoarena.methods.jitrl.step_memory import RetrievalConfig
from evoarena.methods.prompting import render_prompt
from evoarena.models import GenParams

CHOICES = {"variant": ("paper", "released"), "prior": ("logprobs", "confidence"),
           "candidates": ("propose", "admissible"), "rewards": ("paper", "released"),
           "step_scores": ("none", "evaluator")}
CONFIG_KEYS = {f.name for f in dataclasses.fields(JitRLConfig)} - {"variant", "retrieval"}
RETRIEVAL_KEYS = {f.name for f in dataclasses.fields(RetrievalConfig)} - {"mode"}


@method("jitrl")
class JitRLMethod(Method):
    """JitRL (Li et al., ICML 2026; liushiliushi/JitRL @143d221): a frozen actor proposes options with a prior, a
    kNN memory of past steps gives advantages that reweight it at decision time. docs/methods/jitrl.md."""

    roles = ("solver", "evaluator")
    defaults = {"variant": "paper", "prior": "logprobs", "candidates": "propose", "options": 3, "rewards": "paper",
                "step_scores": "none", "history_window": None, "temperature": 0.8, "propose_max_tokens": 96,
                "evaluate_max_tokens": None, "seed": 0, "config": {}, "retrieval": {}, "read_memory": True}

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        p = self.params
        for name, allowed in CHOICES.items():
            if p[name] not in allowed:
                raise ValueError(f"methods.jitrl.params.{name}: {p[name]!r} is not one of {', '.join(allowed)}")
        if int(p["options"]) < 2 or (p["prior"] == "logprobs" and int(p["options"]) > 9):
            raise ValueError("methods.jitrl.params.options: 2..9 (option numbers are one token each)")
        window = p["history_window"]
        if window is not None and (not isinstance(window, int) or isinstance(window, bool) or window < 1):
            raise ValueError("methods.jitrl.params.history_window: a number of actions >= 1, or null for all")
        if int(p["propose_max_tokens"]) < 1 or (p["evaluate_max_tokens"] is not None and
                                                 int(p["evaluate_max_tokens"]) < 1):
            raise ValueError("methods.jitrl.params: propose_max_tokens and evaluate_max_tokens >= 1")
        for name, known in (("config", CONFIG_KEYS), ("retrieval", RETRIEVAL_KEYS)):
            unknown = sorted(set(p[name]) - known)
            if unknown:
                raise ValueError(f"methods.jitrl.params.{name}: unknown {unknown[0]!r} (known: "
                                 f"{', '.join(sorted(known))})")
        self.config = self._config()

    def _config(self) -> JitRLConfig:
        """The variant's constants (`paper_jericho` / `released_jericho`) with the `config` and `retrieval`
        overrides."""
        p = self.params
        make = JitRLConfig.paper_jericho if p["variant"] == "paper" else JitRLConfig.released_jericho
        base = make(**p["config"])
        return dataclasses.replace(base, retrieval=dataclasses.replace(base.retrieval, **p["retrieval"]))

    @property
    def settings(self) -> Settings:
        p = self.params
        return Settings(self.config, p["prior"], p["candidates"], int(p["options"]), float(p["temperature"]),
                        int(p["propose_max_tokens"]), p["history_window"], p["rewards"], int(p["seed"]),
                        bool(p["read_memory"]))

    @classmethod
    def state_view(cls, tree: Mapping[str, str]) -> dict[str, Any]:
        return summary(tree)

    def initialize(self, ws: HarnessWorkspace, system_prompt: str, solver_params: GenParams) -> None:
        """JitRL's own system prompt (the released agent's, in short: every call asks for options, a number or
        confidences, which a benchmark's "reply with one command" would contradict), and the empty memory files."""
        super().initialize(ws, render_prompt(__package__, "system").strip() + "\n", solver_params)
        ws.write(ROWS, "")
        ws.write(EPISODES, "")

    def episode_agent(self, tree: Mapping[str, str], task: TaskView) -> EpisodeAgent | None:
        return JitRLAgent(self.settings, load_memory(tree, self.config.gamma), task)

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        attempt = ctx.solve(task)
        if attempt.error:  # a provider error: the unit is redone or recorded
            return None
        fb = ctx.feedback(task, attempt)
        tree = attempt.tree_after
        if tree is None or EPISODES not in tree:  # the episode stopped before its end (a harness failure)
            ctx.log("jitrl_episode", {"episode": None, "score": float(fb.score), "won": bool(fb.passed),
                                      "why": attempt.parse_error})
            return None
        files = {ROWS: tree.get(ROWS, ""), EPISODES: tree[EPISODES]}
        if self.params["step_scores"] == "evaluator":
            files = self._score_steps(ctx, attempt, files)
        for path, text in files.items():
            if ctx.harness.tree().get(path) != text:
                ctx.harness.write(path, text)
        view = summary(files)
        last = read_episodes(files)[-1]
        ctx.log("jitrl_episode", {"episode": last.episode + 1, "score": float(fb.score),
                                  "won": bool(fb.passed), "steps": last.steps, "stored": last.stored,
                                  "memory": view["memory"], "prior_fallbacks": last.prior_fallbacks,
                                  "proposal_fallbacks": last.proposal_fallbacks,
                                  "step_scores": last.step_scores, "auc": view["auc"],
                                  "late_mean": view["late_mean"]})
        return Manifest(intent=f"JitRL episode {last.episode + 1}: {last.stored} of {last.steps} steps "
                               f"into the step memory ({view['memory']} rows)",
                        evidence=f"{fb.message}; AUC so far {view['auc']:.3f} over {view['episodes']} episode(s)")

    def _score_steps(self, ctx: PracticeContext, attempt: Attempt, files: dict[str, str]) -> dict[str, str]:
        """The evaluator's step scores for the episode just played (paper: its r_t; released: the LLM score of the
        reward chain), and the episode's rows with the returns they give. A reply that is not one score per step in
        −10..10 is recorded as rejected and the rows keep the env rewards."""
        found = last_episode(files)
        assert found is not None
        rows, line = found
        trace = json.loads(attempt.answer or "{}").get("trace") or []
        observations = [str(t["observation"]) for t in trace]
        steps = [{"state": s, "action": r.action, "reward": r.delta}
                 for s, r in zip([line.start, *observations], rows, strict=False)]
        prompt = render_prompt(__package__, "evaluate", won=line.won, score=line.final_score, steps=steps,
                               final=observations[-1] if observations else "")
        cap = self.params["evaluate_max_tokens"]
        reply = ctx.ask("evaluator", prompt, max_tokens=int(cap) if cap is not None else 8 * len(rows) + 32,
                        temperature=float(self.params["temperature"]), reject_cut_off="evaluator reply")
        if reply is None:  # a provider error (the runner decides the step's fate) or a cut-off reply (recorded)
            return self._marked(files, rows, line, "none")
        try:
            scores = replies.step_scores(reply.text, len(rows))
        except replies.ReplyError as err:
            ctx.reject("evaluator reply", reply.text, str(err))
            return self._marked(files, rows, line, "rejected")
        scored = episode_rows(records(rows), scores, won=line.won, rewards=self.params["rewards"],
                              gamma=self.config.gamma, episode=line.episode)
        return replace_last_episode(files, scored, line.model_copy(update={
            "step_scores": "evaluator", "stored": sum(r.return_ is not None for r in scored)}))

    @staticmethod
    def _marked(files: Mapping[str, str], rows: list[Row], line: EpisodeLine, why: str) -> dict[str, str]:
        return replace_last_episode(files, rows, line.model_copy(update={"step_scores": why}))


def summary(tree: Mapping[str, str]) -> dict[str, Any]:
    """The learning curve the memory files record: each practice episode's score (normalised to [0, 1]), the AUC
    (Σ scores / K) and late mean (last 30 %), the memory's size and the replies that fell back."""
    episodes = read_episodes(tree)
    if not episodes and ROWS not in tree:
        return {}
    scores = [float(e.final_score) / float(e.max_score) if float(e.max_score) > 0 else 0.0 for e in episodes]
    return {"episodes": len(episodes), "scores": scores, "won": [e.won for e in episodes],
            "auc": auc(scores, 1.0), "late_mean": late_mean(scores),
            "memory": sum(1 for r in read_rows(tree) if r.return_ is not None),
            "prior_fallbacks": sum(e.prior_fallbacks for e in episodes),
            "proposal_fallbacks": sum(e.proposal_fallbacks for e in episodes)}
