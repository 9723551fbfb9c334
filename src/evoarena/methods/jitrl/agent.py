"""JitRL's episode agent: at every step the candidate actions (the admissible ones, or k the actor proposes), the
actor's prior π₀ over them (option-index token logprobs, or verbalised confidence), the state and history keys, and
`core.JitRL.decide` on the step memory; at the episode's end its steps go into the memory files through
`ctx.edit` with their discounted returns. Every reply that is not of the asked-for form is recorded in the step's
trace and a stated fallback is used (a uniform prior, the admissible actions), never silently."""

from __future__ import annotations

import dataclasses
import hashlib
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import evoarena.methods.jitrl.replies as replies
from evoarena.api import AgentAction, EpisodeAgent, EpisodeContext, EpisodeEnd, EpisodeView, TaskView
from evoarena.methods.jitrl.core import JitRL, JitRLConfig
from evoarena.methods.jitrl.memory import EpisodeLine, RewardPerturbation, StepRecord, episode_rows, with_episode
from evoarena.methods.jitrl.policy import (
    Prior,
    group_returns,
    prior_from_confidence,
    prior_from_logprobs,
    prior_from_probs,
)
from evoarena.methods.jitrl.step_memory import Neighbour, StepKey, StepMemory
from evoarena.methods.prompting import render_prompt
from evoarena.models import GenParams, Message

MAX_INDEX_OPTIONS = 9  # option numbers 1..9 are one token each; beyond, an index's first token is ambiguous
TOP_LOGPROBS = 20  # alternatives asked for at each position (the OpenAI API's maximum)
NO_HISTORY = "no game history"  # the history key before the first action (the released code's "No game history.")
_PUNCT = re.compile(r"[^\w\s]")


@dataclass(frozen=True)
class Settings:
    """What the agent does, from the method's params (docs/methods/jitrl.md § Params)."""

    config: JitRLConfig
    prior: Literal["logprobs", "confidence"]
    candidates: Literal["propose", "admissible"]
    options: int
    temperature: float
    propose_max_tokens: int
    history_window: int | None
    rewards: Literal["paper", "released"]
    seed: int
    read_memory: bool = True  # False: decide as if memory were empty (the same actor and draws, no learning)
    memory_use: Literal["scores", "prompt"] = "scores"  # prompt: the neighbours shown to the actor, π′ = π₀
    perturb: RewardPerturbation = RewardPerturbation()  # the seed's A.5 on the rewards learnt from


def spaced(text: str) -> str:
    """Punctuation replaced by spaces (the released tokeniser drops any token glued to punctuation: `door.`)."""
    return " ".join(_PUNCT.sub(" ", text).split())


def step_key(observation: str, actions: Sequence[str], progress: Sequence[str], window: int | None) -> StepKey:
    """The step's keys: the state is the observation now; the history is the actions that raised the score so far,
    then the last `window` actions (all of them: None; `no game history` before the first), punctuation spaced out
    in both."""
    recent = list(actions[-window:]) if window is not None else list(actions)
    history = " ".join([*progress, *recent]) if actions else NO_HISTORY
    return StepKey(spaced(observation), spaced(history))


def decision_seed(run_seed: int | None, seed: int, task: str, episodes: int, sample_index: int) -> int:
    """The seed of one episode's decision stream: the run's seed, the method's, the task, how many episodes the
    memory holds and the attempt's sample index (so each episode draws afresh, and a replay draws the same)."""
    blob = f"jitrl:{run_seed}:{seed}:{task}:{episodes}:{sample_index}".encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big")


def perturbation(settings: Settings, run_seed: int | None) -> RewardPerturbation:
    """The reward perturbation with its noise stream seeded by the run's seed and the method's."""
    return dataclasses.replace(settings.perturb, seed=f"{run_seed}:{settings.seed}")


def memory_block(neighbours: Sequence[Neighbour]) -> str:
    """The same-memory prompt baseline's text: each action the neighbours took, with their mean return and count
    (the numbers the score update would use), best first; empty without neighbours."""
    groups = group_returns([(n.row.action, n.row.ret) for n in neighbours])
    if not groups:
        return ""
    rows = sorted(((sum(r) / len(r), len(r), a) for a, r in groups.items()), key=lambda x: -x[0])
    return render_prompt(__package__, "memory", rows=[{"action": a, "mean": m, "n": n} for m, n, a in rows])


def _with_instruction(messages: Sequence[Message], instruction: str) -> list[Message]:
    """The harness's step prompt with `instruction` after the step's text (the last user message)."""
    out = list(messages)
    i = max(j for j, m in enumerate(out) if m.role == "user")
    out[i] = Message("user", f"{out[i].content.rstrip()}\n\n{instruction.strip()}")
    return out


class JitRLAgent(EpisodeAgent):
    """One episode of JitRL (built per attempt by `JitRLMethod.episode_agent`), over the memory the harness held
    when the episode began."""

    def __init__(self, settings: Settings, memory: StepMemory, task: TaskView) -> None:
        self.s, self.memory, self.task = settings, memory, task
        self.jitrl: JitRL | None = None
        self.source: JitRL | None = None
        self.seed = 0
        self.start = ""
        self.keys: list[StepKey] = []
        self.actions: list[str] = []
        self.progress: list[str] = []
        self.last_score = 0.0
        self.fallbacks = {"prior": 0, "proposal": 0}
        self.shown = ""  # the memory block of this step (memory_use: prompt)

    # -- one step --------------------------------------------------------------------------------------------------
    def act(self, view: EpisodeView, ctx: EpisodeContext) -> AgentAction:
        if self.jitrl is None:
            self.start = view.start or view.observation
            run_seed = ctx.model("solver").default_params.seed
            self.seed = decision_seed(run_seed, self.s.seed, self.task.id, self.memory.episodes, ctx.sample_index)
            consulted = self.memory if self.s.read_memory else StepMemory(self.memory.gamma)
            prompted = self.s.memory_use == "prompt"
            self.jitrl = JitRL(self.s.config, self.seed, StepMemory(self.memory.gamma) if prompted else consulted)
            self.source = JitRL(self.s.config, self.seed, consulted)  # the prompt baseline's retrieval
        if view.score > self.last_score and self.actions:
            self.progress.append(self.actions[-1])
        self.last_score = view.score
        key = step_key(view.observation, self.actions, self.progress, self.s.history_window)
        info: dict[str, Any] = {}
        if self.s.memory_use == "prompt" and self.source is not None:
            shown = self.source.neighbours(key, view.step)
            self.shown = memory_block(shown)
            info["prompt_neighbours"] = len(shown)
        options, calls = self._candidates(view, ctx, info)
        prior, fallback, more = self._prior(view, ctx, options, info)
        decision = self.jitrl.decide(key, prior, view.step, fallback)
        self.keys.append(key)
        self.actions.append(decision.chosen)
        record = decision.record()
        info.update({"state_key": key.state, "history_key": key.history, **record,
                     "summary": "; ".join(f"{a} {p:.2f}>{s:.2f}" for a, p, s in zip(
                         record["options"], record["prior"], record["scores"], strict=True))
                     + f" => {decision.chosen} ({len(decision.neighbours)} neighbours)"})
        return AgentAction(decision.chosen, {"solver": calls + more}, info)

    def _candidates(self, view: EpisodeView, ctx: EpisodeContext, info: dict[str, Any]) -> tuple[list[str], int]:
        """The options: every admissible action (`candidates: admissible`, or when there are no more than k of
        them), else the k distinct ones the actor proposes (from the admissible list when the env gives one). A
        proposal with no usable line falls back to k admissible actions drawn at random (or, without admissible
        actions, the benchmark's reading of the reply as one action), recorded in the step's trace."""
        admissible = list(dict.fromkeys(view.admissible)) if view.admissible else None
        cap = MAX_INDEX_OPTIONS if self.s.prior == "logprobs" else None
        if admissible is not None and (len(admissible) <= self.s.options or (
                self.s.candidates == "admissible" and (cap is None or len(admissible) <= cap))):
            info["candidate_source"] = "admissible"
            return admissible, 0
        instruction = render_prompt(__package__, "propose", k=self.s.options, admissible=admissible is not None)
        messages = _with_instruction(ctx.step_messages(view), self.shown + instruction)
        reply = ctx.model("solver").complete(messages, GenParams(temperature=self.s.temperature,
                                                                 max_tokens=self.s.propose_max_tokens),
                                             sample_index=ctx.sample_index + self.memory.episodes).text
        try:
            options, dropped = replies.proposed_options(reply, self.s.options, admissible)
        except replies.ReplyError as err:
            self.fallbacks["proposal"] += 1
            info.update({"candidate_source": "fallback", "proposal_error": str(err), "proposal_reply": reply})
            if admissible is not None:
                rng = random.Random(f"{self.seed}:candidates:{view.step}")
                return sorted(rng.sample(admissible, self.s.options), key=admissible.index), 1
            return [ctx.parse(reply).answer or ""], 1
        info["candidate_source"] = "proposed"
        if dropped:
            info["proposal_dropped"] = dropped
        return options, 1

    def _prior(self, view: EpisodeView, ctx: EpisodeContext, options: list[str],
               info: dict[str, Any]) -> tuple[Prior, str | None, int]:
        """π₀ over the options from one actor call (none for a single option), the actor's own pick (the generated
        index, for the released fallback) and the calls made. A reply of the wrong form gives a uniform prior, with
        the error and the reply in the step's trace."""
        if len(options) == 1:
            info["prior_source"] = "single option"
            return prior_from_probs({options[0]: 1.0}), None, 0
        template = "rank" if self.s.prior == "logprobs" else "confidence"
        messages = _with_instruction(ctx.step_messages(view),
                                     self.shown + render_prompt(__package__, template, options=options))
        solver = ctx.model("solver")
        text = ""
        try:
            if self.s.prior == "logprobs":
                done = solver.complete(messages, GenParams(temperature=0.0, max_tokens=4, logprobs=True,
                                                           top_logprobs=TOP_LOGPROBS), sample_index=ctx.sample_index)
                text = done.text
                read = replies.index_logprobs(done.logprobs, len(options))
                info.update({"prior_source": "logprobs", "index_position": read.position})
                if read.below_top:
                    info["below_top"] = [options[i - 1] for i in read.below_top]
                pick = options[read.generated - 1] if read.generated is not None else None
                return prior_from_logprobs({options[i - 1]: lp for i, lp in read.logprobs.items()}), pick, 1
            params = GenParams(temperature=self.s.temperature, max_tokens=8 * len(options) + 16)
            done = solver.complete(messages, params, sample_index=ctx.sample_index + self.memory.episodes)
            text = done.text
            conf = replies.confidences(text, len(options))
            info["prior_source"] = "confidence"
            return prior_from_confidence({options[i - 1]: c for i, c in conf.items()}), None, 1
        except replies.ReplyError as err:
            self.fallbacks["prior"] += 1
            info.update({"prior_source": "uniform (fallback)", "prior_error": str(err), "prior_reply": text})
            return prior_from_probs(dict.fromkeys(options, 1.0 / len(options))), None, 1

    # -- the episode's end -----------------------------------------------------------------------------------------
    def end(self, outcome: EpisodeEnd, ctx: EpisodeContext) -> None:
        """The episode's steps into the memory files: rows with the rewards (score deltas) and returns of the
        `rewards` rule, and the episode's summary line."""
        deltas, previous = [], 0.0
        for score in outcome.scores:
            deltas.append(score - previous)
            previous = score
        steps = [StepRecord(k.state, k.history, a, d) for k, a, d in zip(self.keys, self.actions, deltas,
                                                                          strict=False)]
        rows = episode_rows(steps, None, won=outcome.won, rewards=self.s.rewards, gamma=self.s.config.gamma,
                            episode=self.memory.episodes,
                            perturb=perturbation(self.s, ctx.model("solver").default_params.seed))
        summary = EpisodeLine(episode=self.memory.episodes, steps=len(steps), final_score=outcome.final_score,
                              max_score=outcome.max_score, won=outcome.won, stopped=outcome.stopped,
                              stored=sum(r.return_ is not None for r in rows), start=self.start,
                              prior_fallbacks=self.fallbacks["prior"], proposal_fallbacks=self.fallbacks["proposal"],
                              step_scores=None)
        for path, text in with_episode(ctx.tree, rows, summary).items():
            ctx.edit(path, text)
