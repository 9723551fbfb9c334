"""JitRL's step memory: M = {(state key, action, discounted return G)} and its k-nearest-neighbour retrieval.

An episode's steps are written at its end, each with G_t = Σ_{u≥t} γ^{u−t} r_u of the per-step rewards (paper eq. for
G_t; the released code keeps the reward tail and discounts at retrieval time with the same γ, which is the same
number). Retrieval is lexical, as in the released Jericho agent (liushiliushi/JitRL @143d221): a row's similarity
to the query is 0.3·Jaccard(history unigrams) + 0.7·Jaccard(state 4-grams) over token multisets; hits below a
threshold that falls linearly from r to r − 0.1 over the first 20 steps of an episode are dropped, every hit above
0.98 is kept, and the rest fill up to k. A simpler paper-style option keeps the k best hits above a fixed threshold
with the paper's 0.75/0.25 state/history weights. Which text makes a state or history key (an LLM summary, the
observation) is the caller's: this module only compares texts. Nothing here calls a model; an empty memory
retrieves nothing."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

# released Jericho: a failed episode's last step gets env reward −10 (cross_episode_memory.add_episode)
FAILED_LAST_STEP_REWARD = -10.0


def _check_gamma(gamma: float) -> None:
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"jitrl: gamma must be in [0, 1], got {gamma}")


def discounted_returns(rewards: Sequence[float], gamma: float) -> list[float]:
    """G_t = Σ_{u=t}^{T} γ^{u−t} r_u for every step t of one episode (the paper's return), computed backwards."""
    _check_gamma(gamma)
    out = [0.0] * len(rewards)
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = float(rewards[t]) + gamma * running
        out[t] = running
    return out


def released_step_signals(llm_scores: Sequence[float], env_rewards: Sequence[float], *, success: bool) -> list[float]:
    """The released per-step signal: the evaluator LLM's step score (in [−10, 10]) where it is not 0, else the
    environment's reward; in a failed episode the last step's environment reward is first set to −10, so a failed
    last step the evaluator scored 0 counts −10."""
    if len(llm_scores) != len(env_rewards):
        raise ValueError("jitrl: one LLM score and one env reward per step")
    env = [float(r) for r in env_rewards]
    if not success and env:
        env[-1] = FAILED_LAST_STEP_REWARD
    return [float(s) if s != 0 else r for s, r in zip(llm_scores, env, strict=True)]


def released_returns(llm_scores: Sequence[float], env_rewards: Sequence[float], gamma: float, *,
                     success: bool) -> list[float]:
    """The released code's discounted return, quirk included: while discounting step t's tail it replaces every
    zero signal by step t's own LLM score (cross_episode_memory.retrieve_similar_with_vector). Kept for a method
    that wants the released numbers; `discounted_returns` is the paper's formula."""
    _check_gamma(gamma)
    signals = released_step_signals(llm_scores, env_rewards, success=success)
    out = []
    for t in range(len(signals)):
        own = float(llm_scores[t])
        out.append(sum(gamma ** u * (s if s != 0 else own) for u, s in enumerate(signals[t:])))
    return out


def tokenize(text: str) -> list[str]:
    """The released tokeniser: lower-case, split on whitespace, keep only all-alphanumeric tokens (so a word glued
    to punctuation, `door.`, is dropped: a key should be written with spaced punctuation if it matters)."""
    return [t for t in text.lower().replace("\n", " ").split() if t.isalnum()]


def ngrams(tokens: Sequence[str], n: int) -> list[str]:
    """Space-joined n-grams; a text shorter than n tokens gives its tokens (released behaviour)."""
    if n < 1:
        raise ValueError("jitrl: n-gram size must be at least 1")
    if len(tokens) < n:
        return list(tokens)
    return [" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


def multiset_jaccard(a: Counter[str], b: Counter[str]) -> float:
    """|a ∩ b| / |a ∪ b| over multisets (min and max counts); 0 when either side is empty."""
    if not a or not b:
        return 0.0
    union = sum((a | b).values())
    return sum((a & b).values()) / union if union else 0.0


def threshold_at(step: int, start: float = 0.95, drop: float = 0.1, over: int = 20) -> float:
    """The released retrieval threshold at `step` steps into an episode: `start` at step 0, falling linearly by
    `drop` over the first `over` steps, flat after (0.95 → 0.85 with the Jericho constants)."""
    if step < 0 or over < 1:
        raise ValueError("jitrl: step must be ≥ 0 and over ≥ 1")
    return start - drop * min(step, over) / over


@dataclass(frozen=True)
class StepKey:
    """What a step is looked up by: a state text (the observation, or a summary of it) and a history text (the
    progress/location/inventory summary in the released Jericho agent)."""

    state: str
    history: str = ""


@dataclass(frozen=True)
class MemoryRow:
    """One remembered step: its key, the action taken, the discounted return G from it, its own reward, and where
    it came from (0-based episode and step)."""

    key: StepKey
    action: str
    ret: float
    reward: float
    episode: int
    step: int


@dataclass(frozen=True)
class Neighbour:
    """A retrieved row with its combined similarity and the two Jaccard parts."""

    row: MemoryRow
    similarity: float
    state_sim: float
    history_sim: float


@dataclass(frozen=True)
class RetrievalConfig:
    """How neighbours are chosen. `released`: threshold schedule (`threshold` falling by `threshold_drop` over
    `drop_steps` steps), all hits above `keep_above` kept, the rest fill up to `k`. `paper`: the `k` best hits at or
    above a fixed `threshold`. Both sort hits by similarity, then by return (the released order)."""

    mode: Literal["released", "paper"] = "released"
    k: int = 10
    threshold: float = 0.95
    threshold_drop: float = 0.1
    drop_steps: int = 20
    keep_above: float = 0.98
    history_weight: float = 0.3
    state_weight: float = 0.7
    history_n: int = 1
    state_n: int = 4

    def __post_init__(self) -> None:
        if self.mode not in ("released", "paper"):
            raise ValueError(f"jitrl: retrieval mode must be 'released' or 'paper', got {self.mode!r}")
        if self.k < 1 or self.history_n < 1 or self.state_n < 1 or self.drop_steps < 1:
            raise ValueError("jitrl: k, n-gram sizes and drop_steps must be at least 1")
        if self.history_weight < 0 or self.state_weight < 0 or self.history_weight + self.state_weight <= 0:
            raise ValueError("jitrl: similarity weights must be ≥ 0 and not both 0")

    @classmethod
    def released_jericho(cls) -> RetrievalConfig:
        """The released Jericho agent: 0.3/0.7 history/state, r = 0.95 → 0.85 over 20 steps, keep > 0.98, k = 10."""
        return cls()

    @classmethod
    def paper_jericho(cls) -> RetrievalConfig:
        """The paper's Jericho numbers (threshold 0.95, state/history weights 0.75/0.25, k = 10), fixed threshold."""
        return cls(mode="paper", history_weight=0.25, state_weight=0.75)

    def threshold_at(self, step: int) -> float:
        """The threshold in force `step` steps into an episode (fixed in `paper` mode)."""
        if self.mode == "paper":
            return self.threshold
        return threshold_at(step, self.threshold, self.threshold_drop, self.drop_steps)


class StepMemory:
    """The step memory M of one agent across episodes. Rows are appended whole episodes at a time; each row's token
    n-gram multisets are built once and cached, so a retrieval is one pass of multiset Jaccards over M."""

    def __init__(self, gamma: float = 0.5) -> None:
        _check_gamma(gamma)
        self.gamma = gamma
        self._rows: list[MemoryRow] = []
        self._grams: dict[tuple[int, str, int], Counter[str]] = {}
        self.episodes = 0

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def rows(self) -> tuple[MemoryRow, ...]:
        return tuple(self._rows)

    def add_episode(self, keys: Sequence[StepKey], actions: Sequence[str], rewards: Sequence[float]) -> list[MemoryRow]:
        """Write one finished episode: step t's row gets G_t of `rewards` with this memory's γ."""
        return self.add_returns(keys, actions, discounted_returns(rewards, self.gamma), rewards)

    def add_returns(self, keys: Sequence[StepKey], actions: Sequence[str], returns: Sequence[float],
                    rewards: Sequence[float] | None = None) -> list[MemoryRow]:
        """Write one finished episode whose returns were computed elsewhere (e.g. `released_returns`)."""
        if not len(keys) == len(actions) == len(returns) or (rewards is not None and len(rewards) != len(keys)):
            raise ValueError("jitrl: an episode needs one key, action, return (and reward) per step")
        own = list(rewards) if rewards is not None else [0.0] * len(keys)
        rows = [MemoryRow(key, action.strip(), float(g), float(r), self.episodes, t)
                for t, (key, action, g, r) in enumerate(zip(keys, actions, returns, own, strict=True))]
        self._rows.extend(rows)
        self.episodes += 1
        return rows

    def _row_grams(self, index: int, part: str, n: int) -> Counter[str]:
        cached = self._grams.get((index, part, n))
        if cached is None:
            key = self._rows[index].key
            cached = Counter(ngrams(tokenize(key.state if part == "state" else key.history), n))
            self._grams[(index, part, n)] = cached
        return cached

    def score(self, query: StepKey, config: RetrievalConfig) -> list[Neighbour]:
        """Every row with its similarity to `query`, in memory order (no threshold)."""
        q_state = Counter(ngrams(tokenize(query.state), config.state_n))
        q_hist = Counter(ngrams(tokenize(query.history), config.history_n))
        total = config.history_weight + config.state_weight
        out = []
        for i, row in enumerate(self._rows):
            s = multiset_jaccard(q_state, self._row_grams(i, "state", config.state_n))
            h = multiset_jaccard(q_hist, self._row_grams(i, "history", config.history_n))
            out.append(Neighbour(row, (config.history_weight * h + config.state_weight * s) / total, s, h))
        return out

    def retrieve(self, query: StepKey, config: RetrievalConfig | None = None, step: int = 0) -> list[Neighbour]:
        """The neighbours N(s) of `query` at `step` steps into the current episode (see `RetrievalConfig`)."""
        config = config or RetrievalConfig.released_jericho()
        floor = config.threshold_at(step)
        hits = [n for n in self.score(query, config) if n.similarity >= floor]
        hits.sort(key=lambda n: (n.similarity, n.row.ret), reverse=True)
        if config.mode == "paper":
            return hits[:config.k]
        high = [n for n in hits if n.similarity > config.keep_above]
        rest = [n for n in hits if n.similarity <= config.keep_above]
        return high + rest[:max(0, config.k - len(high))]

    def retrieve_wrong(self, query: StepKey, config: RetrievalConfig, step: int,
                       rng: random.Random) -> list[Neighbour]:
        """The seed's wrong retrieval (check A.5): as many rows as `retrieve` returns, drawn at random from the rows
        below the step's threshold — memories of other states — so what is retrieved is wrong, not whether."""
        wanted = len(self.retrieve(query, config, step))
        floor = config.threshold_at(step)
        wrong = [n for n in self.score(query, config) if n.similarity < floor]
        return rng.sample(wrong, min(wanted, len(wrong)))
