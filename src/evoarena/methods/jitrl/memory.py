"""JitRL's step memory as harness files, so every practice episode's memory is a saved, diffable version:
`memory/jitrl.jsonl` holds one row per remembered step (its state and history keys, the action, the step's env
reward and step score, the discounted return), `memory/jitrl_episodes.jsonl` one line per episode written (so the
episode count — the released episode weight — survives an episode that left no row). An episode's rows are made
here from its per-step env rewards (score deltas) and step scores with the `paper` or `released` return rule."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evoarena.harness.state import parse_records, record_line
from evoarena.methods.jitrl.step_memory import (
    StepKey,
    StepMemory,
    discounted_returns,
    released_returns,
    released_step_signals,
)

ROWS = "memory/jitrl.jsonl"
EPISODES = "memory/jitrl_episodes.jsonl"
Rewards = Literal["paper", "released"]
Perturbation = Literal["none", "wrong_retrieval", "reward_noise", "reward_inversion"]


@dataclass(frozen=True)
class RewardPerturbation:
    """The seed's check A.5 on the rewards the memory learns from: `reward_noise` adds N(0, `scale`²) to every
    step's reward (env reward and step score), `reward_inversion` negates them; any other kind leaves them. The
    noise is drawn from a stream seeded by `seed` and the episode, so a replay draws the same."""

    kind: Perturbation = "none"
    scale: float = 1.0
    seed: str = ""

    def apply(self, values: Sequence[float], episode: int, part: str) -> list[float]:
        if self.kind == "reward_inversion":
            return [-float(v) for v in values]
        if self.kind == "reward_noise":
            rng = random.Random(f"jitrl-reward-noise:{self.seed}:{episode}:{part}")
            return [float(v) + rng.gauss(0.0, self.scale) for v in values]
        return [float(v) for v in values]


class Row(BaseModel):
    """A line of `memory/jitrl.jsonl`: one played step, its env reward (`delta`), its step score (None: not
    scored), the reward its return was made from and the return (None: not stored, never retrieved)."""

    model_config = ConfigDict(validate_by_name=True)

    episode: int
    step: int
    state: str
    history: str
    action: str
    delta: float
    step_score: float | None
    reward: float | None
    return_: float | None = Field(validation_alias="return", serialization_alias="return")


class EpisodeLine(BaseModel):
    """A line of `memory/jitrl_episodes.jsonl`: one episode's outcome, how many of its steps were stored, its first
    observation, the replies that fell back, and how its steps were scored (None: not; evaluator | none |
    rejected). The scores are as the environment gave them (an int stays an int in the file)."""

    episode: int
    steps: int
    final_score: int | float
    max_score: int | float
    won: bool
    stopped: str
    stored: int
    start: str
    prior_fallbacks: int
    proposal_fallbacks: int
    step_scores: str | None


@dataclass(frozen=True)
class StepRecord:
    """One played step as the agent saw it: its keys, the action taken, the env reward (score delta) after it."""

    state: str
    history: str
    action: str
    delta: float


def episode_rows(steps: Sequence[StepRecord], step_scores: Sequence[float] | None, *, won: bool, rewards: Rewards,
                 gamma: float, episode: int, perturb: RewardPerturbation | None = None) -> list[Row]:
    """One row per played step of a finished episode. `paper`: r_t is the step score when given (the paper's
    evaluator), else the env reward, and G_t = Σ γ^u r_{t+u}. `released` (Jericho `add_episode` and retrieval
    @143d221): signal = step score if ≠ 0 else env reward, a failed episode's last env reward set to −10, the return
    with the released zero-substitution, and a won episode's last step not stored (its reward counts nowhere): its
    row keeps `return` None and is never retrieved. `perturb` changes the env rewards and step scores first (the
    rows keep the true ones in `delta` and `step_score`; `reward` is the one learnt from)."""
    perturb = perturb or RewardPerturbation()
    deltas = perturb.apply([s.delta for s in steps], episode, "env")
    scores = perturb.apply(step_scores, episode, "scores") if step_scores is not None else [0.0] * len(steps)
    if len(scores) != len(steps):
        raise ValueError("jitrl: one step score per step")
    used: list[float | None]
    returns: list[float | None]
    if rewards == "paper":
        used = list(scores if step_scores is not None else deltas)
        returns = list(discounted_returns(scores if step_scores is not None else deltas, gamma))
    else:
        kept = len(steps) - 1 if won and steps else len(steps)
        used = [*released_step_signals(scores[:kept], deltas[:kept], success=won), None][:len(steps)]
        returns = [*released_returns(scores[:kept], deltas[:kept], gamma, success=won), None][:len(steps)]
    return [Row(episode=episode, step=t, state=s.state, history=s.history, action=s.action, delta=s.delta,
                step_score=float(step_scores[t]) if step_scores is not None else None, reward=used[t],
                return_=returns[t]) for t, s in enumerate(steps)]


def records(rows: Sequence[Row]) -> list[StepRecord]:
    """The played steps behind an episode's rows (to score them again)."""
    return [StepRecord(r.state, r.history, r.action, r.delta) for r in rows]


def read_rows(tree: Mapping[str, str]) -> list[Row]:
    return parse_records(ROWS, tree.get(ROWS, ""), Row)


def read_episodes(tree: Mapping[str, str]) -> list[EpisodeLine]:
    return parse_records(EPISODES, tree.get(EPISODES, ""), EpisodeLine)


def jsonl(lines: Sequence[BaseModel]) -> str:
    """The text of a JSON-lines memory file (the agent edits it whole, through its episode context)."""
    return "".join(record_line(line) for line in lines)


def load_memory(tree: Mapping[str, str], gamma: float) -> StepMemory:
    """The step memory the harness holds: its stored rows (`return` not None), episode by episode in the order
    written (an episode with no stored row still counts), their returns as written."""
    memory = StepMemory(gamma)
    episodes = len(read_episodes(tree))
    by_episode: dict[int, list[tuple[Row, float]]] = {}
    for r in read_rows(tree):
        if r.return_ is not None:
            by_episode.setdefault(r.episode, []).append((r, r.return_))
    for e in range(max([episodes, *(k + 1 for k in by_episode)])):
        got = by_episode.get(e, [])
        memory.add_returns([StepKey(r.state, r.history) for r, _ in got], [r.action for r, _ in got],
                           [g for _, g in got], [float(r.reward or 0.0) for r, _ in got])
    return memory


def with_episode(tree: Mapping[str, str], rows: Sequence[Row], summary: EpisodeLine) -> dict[str, str]:
    """The two memory files with one more episode: its rows and its summary line."""
    return {ROWS: tree.get(ROWS, "") + jsonl(rows), EPISODES: tree.get(EPISODES, "") + jsonl([summary])}


def last_episode(tree: Mapping[str, str]) -> tuple[list[Row], EpisodeLine] | None:
    """The last episode's rows and summary line, or None when the memory holds no episode."""
    episodes = read_episodes(tree)
    if not episodes:
        return None
    return [r for r in read_rows(tree) if r.episode == len(episodes) - 1], episodes[-1]


def replace_last_episode(tree: Mapping[str, str], rows: Sequence[Row], summary: EpisodeLine) -> dict[str, str]:
    """The two memory files with the last episode's rows and summary line replaced (after its steps were scored)."""
    episodes = read_episodes(tree)
    if not episodes:
        raise ValueError("jitrl: no episode to replace")
    last = len(episodes) - 1
    kept = [r for r in read_rows(tree) if r.episode != last]
    return {ROWS: jsonl([*kept, *rows]), EPISODES: jsonl([*episodes[:-1], summary])}
