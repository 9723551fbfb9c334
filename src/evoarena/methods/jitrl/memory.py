"""JitRL's step memory as harness files, so every practice episode's memory is a saved, diffable version:
`memory/jitrl.jsonl` holds one row per remembered step (its state and history keys, the action, the step's env
reward and step score, the discounted return), `memory/jitrl_episodes.jsonl` one line per episode written (so the
episode count — the released episode weight — survives an episode that left no row). An episode's rows are made
here from its per-step env rewards (score deltas) and step scores with the `paper` or `released` return rule."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

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


@dataclass(frozen=True)
class StepRecord:
    """One played step as the agent saw it: its keys, the action taken, the env reward (score delta) after it."""

    state: str
    history: str
    action: str
    delta: float


def episode_rows(steps: Sequence[StepRecord], step_scores: Sequence[float] | None, *, won: bool, rewards: Rewards,
                 gamma: float, episode: int) -> list[dict[str, Any]]:
    """One row per played step of a finished episode. `paper`: r_t is the step score when given (the paper's
    evaluator), else the env reward, and G_t = Σ γ^u r_{t+u}. `released` (Jericho `add_episode` and retrieval
    @143d221): signal = step score if ≠ 0 else env reward, a failed episode's last env reward set to −10, the return
    with the released zero-substitution, and a won episode's last step not stored (its reward counts nowhere): its
    row keeps `return` None and is never retrieved."""
    deltas = [s.delta for s in steps]
    scores = [float(x) for x in step_scores] if step_scores is not None else [0.0] * len(steps)
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
    return [{"episode": episode, "step": t, "state": s.state, "history": s.history, "action": s.action,
             "delta": s.delta, "step_score": scores[t] if step_scores is not None else None, "reward": used[t],
             "return": returns[t]} for t, s in enumerate(steps)]


def records(rows: Sequence[Mapping[str, Any]]) -> list[StepRecord]:
    """The played steps behind an episode's rows (to score them again)."""
    return [StepRecord(r["state"], r["history"], r["action"], float(r["delta"])) for r in rows]


def read_jsonl(tree: Mapping[str, str], path: str) -> list[dict[str, Any]]:
    """The JSON lines of a harness file ([] when absent)."""
    return [json.loads(line) for line in tree.get(path, "").splitlines() if line.strip()]


def jsonl(rows: Sequence[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)


def load_memory(tree: Mapping[str, str], gamma: float) -> StepMemory:
    """The step memory the harness holds: its stored rows (`return` not None), episode by episode in the order
    written (an episode with no stored row still counts), their returns as written."""
    memory = StepMemory(gamma)
    rows = read_jsonl(tree, ROWS)
    episodes = len(read_jsonl(tree, EPISODES))
    by_episode: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        if r["return"] is None:
            continue
        by_episode.setdefault(int(r["episode"]), []).append(r)
    for e in range(max([episodes, *(k + 1 for k in by_episode)])):
        got = by_episode.get(e, [])
        memory.add_returns([StepKey(r["state"], r["history"]) for r in got], [r["action"] for r in got],
                           [float(r["return"]) for r in got], [float(r["reward"]) for r in got])
    return memory


def with_episode(tree: Mapping[str, str], rows: Sequence[Mapping[str, Any]], summary: Mapping[str, Any]) -> dict[
        str, str]:
    """The two memory files with one more episode: its rows and its summary line."""
    return {ROWS: tree.get(ROWS, "") + jsonl(rows), EPISODES: tree.get(EPISODES, "") + jsonl([summary])}


def last_episode(tree: Mapping[str, str]) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """The last episode's rows and summary line, or None when the memory holds no episode."""
    episodes = read_jsonl(tree, EPISODES)
    if not episodes:
        return None
    return [r for r in read_jsonl(tree, ROWS) if int(r["episode"]) == len(episodes) - 1], episodes[-1]


def replace_last_episode(tree: Mapping[str, str], rows: Sequence[Mapping[str, Any]], summary: Mapping[str, Any]) -> \
        dict[str, str]:
    """The two memory files with the last episode's rows and summary line replaced (after its steps were scored)."""
    episodes = read_jsonl(tree, EPISODES)
    if not episodes:
        raise ValueError("jitrl: no episode to replace")
    last = len(episodes) - 1
    kept = [r for r in read_jsonl(tree, ROWS) if int(r["episode"]) != last]
    return {ROWS: jsonl([*kept, *rows]), EPISODES: jsonl([*episodes[:-1], summary])}
