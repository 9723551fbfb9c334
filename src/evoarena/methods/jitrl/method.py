"""The `jitrl` method: a practice step is one episode played by the JitRL agent over the step memory the harness
holds; the episode's steps, with their discounted returns (and, with `step_scores: evaluator`, the evaluator's
per-step scores), become the next version's memory files. In val and test the agent reads the memory and its
edits end with the episode: the harness under test does not learn between test tasks."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, model_validator

import evoarena.methods.jitrl.replies as replies
from evoarena.api import Attempt, EpisodeAgent, Method, PracticeContext, TaskView, method
from evoarena.envs.metrics import auc, late_mean
from evoarena.harness import HarnessWorkspace, Manifest
from evoarena.methods.jitrl.agent import JitRLAgent, Settings, perturbation
from evoarena.methods.jitrl.core import JitRLConfig
from evoarena.methods.jitrl.memory import (
    EPISODES,
    ROWS,
    EpisodeLine,
    Perturbation,
    RewardPerturbation,
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

Override = bool | int | float
"""A value overriding a field of `JitRLConfig` or `RetrievalConfig` (kept as given: an int stays an int)."""
CONFIG_KEYS = {f.name for f in dataclasses.fields(JitRLConfig)} - {"variant", "retrieval", "wrong_retrieval"}
RETRIEVAL_KEYS = {f.name for f in dataclasses.fields(RetrievalConfig)} - {"mode"}


@method("jitrl")
class JitRLMethod(Method):
    """JitRL (Li et al., ICML 2026; liushiliushi/JitRL @143d221): a frozen actor proposes options with a prior, a
    kNN memory of past steps gives advantages that reweight it at decision time. docs/methods/jitrl.md."""

    roles = ("solver", "evaluator")

    class Params(Method.Params):
        variant: Literal["paper", "released"] = Field("paper", description="`paper`: `JitRLConfig.paper_jericho()` "
                                                      "(π ∝ π₀·exp(βÂ), sampled); `released`: `released_jericho()` "
                                                      "(Â added to a probability, argmax).")
        prior: Literal["logprobs", "confidence"] = Field("logprobs", description="`logprobs` (option-index token) "
                                                         "or `confidence` (verbalised 0–100; the released default).")
        candidates: Literal["propose", "admissible"] = Field("propose", description="`propose` (k options from the "
                                                             "actor, from the admissible list) or `admissible` (all "
                                                             "of them).")
        options: int = Field(3, ge=2, description="k, the options proposed (at most 9 with `logprobs`: an option "
                                                  "number must be one token).")
        rewards: Literal["paper", "released"] = Field("paper", description="`paper` (G = Σγ^u r) or `released` (the "
                                                      "released reward chain).")
        step_scores: Literal["none", "evaluator"] = Field("none", description="`none` (env score deltas) or "
                                                          "`evaluator` (an LLM scores every step after the episode).")
        history_window: int | None = Field(None, ge=1, description="Actions in the history key: all (null) or the "
                                                                   "last n.")
        temperature: float = Field(0.8, description="The proposal's, the confidence reply's and the evaluator's "
                                                    "(paper and released: 0.8).")
        propose_max_tokens: int = Field(96, ge=1, description="Cap of a proposal.")
        evaluate_max_tokens: int | None = Field(None, ge=1, description="Cap of the evaluator's reply (null: 8 per "
                                                                        "step + 32).")
        seed: int = Field(0, description="Mixed into the decision stream's seed with the run's.")
        config: dict[str, Override] = Field(default_factory=dict, description="Overrides of `JitRLConfig`: "
                                            "`gamma`, `lam`, `alpha`, `beta`, `episode_weight`, "
                                            "`memory_action_prior`, `greedy`.")
        retrieval: dict[str, Override] = Field(default_factory=dict, description="Overrides of `RetrievalConfig`: "
                                               "`k`, `threshold`, `threshold_drop`, `drop_steps`, `keep_above`, "
                                               "`history_weight`, `state_weight`, `history_n`, `state_n`.")
        read_memory: bool = Field(True, description="False: every decision is made as if the memory were empty, "
                                  "while it is still written (a control: the same actor and draws without the "
                                  "learning).")
        memory_use: Literal["scores", "prompt"] = Field("scores", description="`scores`: the memory's advantages "
                                                        "reweight the prior (JitRL); `prompt`: the same neighbours "
                                                        "are shown in the actor's prompts and π′ = π₀ (the seed's "
                                                        "same-memory prompt baseline; the paper's prompt-update).")
        perturb: Perturbation = Field("none", description="The seed's check A.5: `wrong_retrieval` (neighbours "
                                      "drawn from other states), `reward_noise` (N(0, σ²) added to every reward "
                                      "learnt from, σ = `reward_noise`), `reward_inversion` (those rewards negated).")
        reward_noise: float = Field(1.0, gt=0, description="σ of `perturb: reward_noise`, in the rewards' own units "
                                                           "(score deltas, or the evaluator's −10..10).")

        @model_validator(mode="after")
        def _consistent(self) -> JitRLMethod.Params:
            if self.prior == "logprobs" and self.options > 9:
                raise ValueError("options: 2..9 with prior logprobs (option numbers are one token each)")
            for name, known in (("config", CONFIG_KEYS), ("retrieval", RETRIEVAL_KEYS)):
                unknown = sorted(set(getattr(self, name)) - known)
                if unknown:
                    raise ValueError(f"{name}: unknown {unknown[0]!r} (known: {', '.join(sorted(known))})")
            return self

    params: Params

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.config = self._config()

    def _config(self) -> JitRLConfig:
        """The variant's constants (`paper_jericho` / `released_jericho`) with the `config` and `retrieval`
        overrides."""
        p = self.params
        make = JitRLConfig.paper_jericho if p.variant == "paper" else JitRLConfig.released_jericho
        base = make(**p.config, wrong_retrieval=p.perturb == "wrong_retrieval")
        retrieval = dataclasses.replace(base.retrieval, **p.retrieval)  # type: ignore[arg-type]
        return dataclasses.replace(base, retrieval=retrieval)

    @property
    def settings(self) -> Settings:
        p = self.params
        return Settings(self.config, p.prior, p.candidates, p.options, p.temperature,
                        p.propose_max_tokens, p.history_window, p.rewards, p.seed,
                        p.read_memory, p.memory_use, RewardPerturbation(p.perturb, p.reward_noise))

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
        if self.params.step_scores == "evaluator":
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
        cap = self.params.evaluate_max_tokens
        reply = ctx.ask("evaluator", prompt, max_tokens=int(cap) if cap is not None else 8 * len(rows) + 32,
                        temperature=self.params.temperature, reject_cut_off="evaluator reply")
        if reply is None:  # a provider error (the runner decides the step's fate) or a cut-off reply (recorded)
            return self._marked(files, rows, line, "none")
        try:
            scores = replies.step_scores(reply.text, len(rows))
        except replies.ReplyError as err:
            ctx.reject("evaluator reply", reply.text, str(err))
            return self._marked(files, rows, line, "rejected")
        scored = episode_rows(records(rows), scores, won=line.won, rewards=self.params.rewards,
                              gamma=self.config.gamma, episode=line.episode,
                              perturb=perturbation(self.settings, ctx.model("solver").default_params.seed))
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
