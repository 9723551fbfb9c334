"""EvoTest's state in the harness: the tree of configurations (one node per episode, as released), the win-freeze
bookkeeping, the per-episode scores, and which harness files make a configuration.

Files. A configuration is `system.md` (the guiding prompt), `extract_state.py` (the state extractor), `harness.toml`
(the actor's temperature) and, in the `paper` scope, `memory/lessons.md` (the evolved success / failure memory). The
files every configuration shares are `instructions.md` (the task's instructions, never evolved), `harness.py` (the
step program) and the rule-based memory (`memory/successes.jsonl` for the actor, `memory/evotest/failures.jsonl` for
the evolver). `memory/evotest/` is the method's own: `state.json` and each node's last trajectory.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from evoarena.envs.metrics import auc, late_mean
from evoarena.harness.state import Absent, parse_state
from evoarena.search import Scored, ucb_scores
from evoarena.search.tree_log import SearchNode

STATE_DIR = "memory/evotest/"
STATE = STATE_DIR + "state.json"
GUIDE, EXTRACTOR, KNOBS, LESSONS = "system.md", "extract_state.py", "harness.toml", "memory/lessons.md"
INSTRUCTIONS, PROGRAM = "instructions.md", "harness.py"
CONFIG = (GUIDE, EXTRACTOR, KNOBS, LESSONS)
DEFAULT_GUIDE = "Explore systematically and examine objects to make progress."  # the released initial prompt
DEFAULT_EXTRACTOR = 'def extract_state(game_history):\n    return "Game in progress."\n'  # the released initial code


def trajectory_path(node_id: str) -> str:
    return f"{STATE_DIR}trajectories/{node_id}.txt"


class Node(BaseModel):
    """One configuration of the tree: its files, the episodes it played and their scores, its children, the harness
    versions it was played as, the parts its evolution changed (`adopted`) and those refused."""

    id: str
    parent: str | None
    depth: int
    origin: str  # root | evolved | copy | exploit
    config: dict[str, str]
    scores: list[float] = []
    raw_scores: list[float] = []  # the same episodes' scores on the game's own scale (the released UCB's input)
    episodes: list[int] = []
    children: list[str] = []
    versions: list[str] = []
    adopted: list[str] = []
    refused: list[str] = []


class Choice(BaseModel):
    """The choice made after an episode: exploit the best node (`source`), or evolve `source`, the argmax of `ucb`
    (greedy: without exploration), into a child that adopted the parts listed; absent after an exploit."""

    action: str  # exploit | evolve
    source: str
    ucb: Absent[dict[str, float]] = None
    greedy: Absent[bool] = None
    adopted: Absent[list[str]] = None


class Episode(Choice):
    """One played episode: the node that played it, its score (normalised, and on the game's scale), whether it won,
    its steps, the node to play next, the choice that made that node, and the evolver or extractor output rejected
    in the step (the parts named, e.g. `evolver reply`, `extract_state`)."""

    episode: int
    node: str
    score: float
    raw_score: Absent[float] = None
    rejected: list[str] = []
    won: bool
    steps: int
    next: str


class State(BaseModel):
    """EvoTest's state: the tree, the node to play next, the episodes, the best node and the win-freeze latch."""

    nodes: list[Node]
    next: str
    episodes: list[Episode] = []
    best: str | None = None
    best_score: float | None = None
    last_score: float | None = None
    frozen: bool = False
    threshold: float = 0.0
    auto_threshold: bool = False
    just_unfroze: bool = False


def read_state(tree: Mapping[str, str]) -> State | None:
    text = tree.get(STATE)
    return None if text is None else parse_state(STATE, text, State)


def config_of(tree: Mapping[str, str]) -> dict[str, str]:
    """The configuration files a harness tree holds."""
    return {p: tree[p] for p in CONFIG if p in tree}


def new_state(root_config: Mapping[str, str], threshold: float = 0.0) -> State:
    """The tree before the first episode: the root configuration, to be played first; `threshold`: the win-freeze
    threshold set in the spec (0: none until a win sets it)."""
    root = Node(id="n0", parent=None, depth=0, origin="root", config=dict(root_config))
    return State(nodes=[root], next="n0", threshold=threshold)


def nodes_by_id(state: State) -> dict[str, Node]:
    return {n.id: n for n in state.nodes}


def archive(state: State, *, raw: bool = False) -> list[Scored]:
    """The scored nodes, in creation order, as the search policies read them; `raw`: with their scores on the game's
    own scale (the released UCB adds its bonus to the raw game score), where every episode has one."""
    def scores(n: Node) -> tuple[float, ...]:
        return tuple(n.raw_scores if raw and len(n.raw_scores) == len(n.scores) else n.scores)
    return [Scored(n.id, scores(n), n.parent) for n in state.nodes if n.scores]


def choose_parent(state: State, *, c: float, alpha: float, raw: bool) -> tuple[str, dict[str, float]]:
    """The node to evolve — the highest score + c·α^depth·sqrt(ln max(2, N) / (1 + children)), the earliest among
    ties (c = 0: greedy on the score) — and every node's UCB; `raw`: the scores on the game's scale, as released."""
    members = archive(state, raw=raw)
    ucb = dict(zip([m.id for m in members], ucb_scores(members, c, alpha), strict=True))
    return max(members, key=lambda m: ucb[m.id]).id, ucb


def end_episode(state: State, node_id: str, score: float, won: bool, *, freeze_on_win: bool) -> None:
    """The released `end_episode`: the best node (a strictly higher score; the earliest among ties), and the freeze
    latch — a win freezes the tree (the winning score becomes the threshold when none was set), a miss while frozen
    unfreezes it (an automatic threshold is dropped) and makes the next episode evolve. (Released, the latch is always
    on; `freeze_on_win: false` turns it off here too.)"""
    state.last_score = score
    if state.best_score is None or score > state.best_score:
        state.best, state.best_score = node_id, score
    if won and freeze_on_win:
        state.frozen = True
        if not state.threshold:
            state.threshold, state.auto_threshold = score, True
    elif state.frozen and not won:
        state.frozen = False
        if state.auto_threshold:
            state.threshold, state.auto_threshold = 0.0, False
        state.just_unfroze = True


def next_move(state: State, *, freeze_on_win: bool, force_best_after_drop: bool,
              drop_threshold: float) -> tuple[bool, bool]:
    """The released `start_episode` rule as (exploit, greedy): exploit the best node when a win froze the tree, when
    the best score is past the win threshold, or when the last episode fell `drop_threshold` below the best — but not
    right after an unfreeze (that episode evolves, and clears the flag); greedy: UCB without exploration (frozen, or
    past the threshold)."""
    threshold, best = state.threshold, state.best_score or 0.0
    past = freeze_on_win and threshold > 0 and best >= threshold
    drop = force_best_after_drop and state.last_score is not None and best - state.last_score >= drop_threshold
    exploit = bool(past or state.frozen or drop) and not state.just_unfroze
    state.just_unfroze = False
    return exploit, bool(state.frozen or past)


def temperature(config: Mapping[str, str]) -> float | None:
    """The `[solver]` temperature a configuration's harness.toml sets (None when it sets none)."""
    try:
        value = tomllib.loads(config.get(KNOBS, "")).get("solver", {}).get("temperature")
    except tomllib.TOMLDecodeError:
        return None
    return float(value) if isinstance(value, int | float) else None


def with_temperature(knobs: str, value: float) -> str:
    """harness.toml with its `[solver]` temperature set to `value` (the other knobs kept)."""
    data = tomllib.loads(knobs) if knobs.strip() else {}
    solver = {**data.get("solver", {}), "temperature": value}
    lines = ["# Harness knobs. [solver] overrides the benchmark's generation defaults.", "[solver]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in solver.items()]
    return "\n".join(lines) + "\n"


def summary(state: State | None) -> dict[str, Any]:
    """The learning curve of the practice episodes: each episode's score (normalised to [0, 1]), the seeds' AUC (Σ
    scores / K, max score 1) and the late mean (last 30 %), and the tree's size."""
    if state is None:
        return {}
    scores = [e.score for e in state.episodes]
    return {"episodes": len(scores), "scores": scores, "won": [e.won for e in state.episodes],
            "auc": auc(scores, 1.0), "late_mean": late_mean(scores), "nodes": len(state.nodes),
            "depth": max((n.depth for n in state.nodes), default=0), "best": state.best, "frozen": state.frozen}


def search_node(node: Node) -> SearchNode:
    """A node as the search tree shows it: its mean episode score so far, the parts its evolution adopted (their
    text) or how it came to be (a copy, an exploit), and the version it was last played as."""
    score = sum(node.scores) / len(node.scores) if node.scores else None
    text = "\n\n".join(f"# {k}\n{node.config.get(k, '')}" for k in node.adopted) or None
    return SearchNode(node=node.id, parents=[node.parent] if node.parent else [], accepted=True, score=score,
                      score_label=f"mean episode score (n={len(node.scores)})", text=text,
                      component=", ".join(node.adopted) or node.origin,
                      version=node.versions[-1] if node.versions else None)
