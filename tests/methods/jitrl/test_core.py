"""The JitRL face: the configurations carry their sources' constants; decisions replay exactly from a seed; a trace
record is JSON; memory written from episodes shifts later decisions toward the action that paid; the released
episode weight follows the episodes in memory; the maze fills memory one row per step; and the model-free core
(`core`, `step_memory`, `policy`) imports nothing of evoarena but itself."""

from __future__ import annotations

import ast
import json
import random
import re
from pathlib import Path

import pytest

from evoarena.envs import Maze
from evoarena.methods.jitrl.core import JitRL, JitRLConfig
from evoarena.methods.jitrl.policy import prior_from_confidence, prior_from_probs
from evoarena.methods.jitrl.step_memory import RetrievalConfig, StepKey

JITRL = Path(__file__).resolve().parents[3] / "src" / "evoarena" / "methods" / "jitrl"
CORE = ("core.py", "step_memory.py", "policy.py")
CORE_MODULES = {f"evoarena.methods.jitrl.{name.removesuffix('.py')}" for name in CORE}
KEY = StepKey("you are in front of a locked door with a brass key on the floor", "start no progress yet")


def test_configurations_carry_their_sources_constants() -> None:
    paper, released = JitRLConfig.paper_jericho(), JitRLConfig.released_jericho()
    assert (paper.gamma, paper.lam, paper.alpha, paper.beta) == (0.5, 0.65, 5.0, 1.0)
    assert paper.retrieval == RetrievalConfig(mode="paper", k=10, threshold=0.95, history_weight=0.25,
                                              state_weight=0.75)
    assert (released.gamma, released.lam, released.alpha, released.episode_weight) == (0.5, 0.65, 1.0, True)
    r = released.retrieval
    assert (r.mode, r.k, r.threshold, r.threshold_drop, r.drop_steps, r.keep_above) == ("released", 10, 0.95, 0.1, 20,
                                                                                          0.98)
    assert (r.history_weight, r.state_weight, r.history_n, r.state_n) == (0.3, 0.7, 1, 4)
    assert JitRLConfig.paper_jericho(beta=3.0).beta == 3.0
    with pytest.raises(ValueError):
        JitRLConfig(variant="paper", lam=1.5)
    with pytest.raises(ValueError):
        JitRLConfig(variant="both")  # type: ignore[arg-type]


def _teach(agent: JitRL, episodes: int = 3) -> None:
    """Episodes in which `take key` from KEY paid off and `kick door` did not."""
    for e in range(episodes):
        action = "take key" if e % 2 == 0 else "kick door"
        agent.add_episode([KEY, StepKey("you hold the key", "start took key")], [action, "open door"],
                          [1.0 if action == "take key" else -1.0, 0.0])


@pytest.mark.parametrize("variant", ["paper", "released"])
def test_memory_from_episodes_shifts_the_decision_toward_what_paid(variant: str) -> None:
    config = JitRLConfig.paper_jericho() if variant == "paper" else JitRLConfig.released_jericho()
    agent = JitRL(config, seed=0)
    prior = prior_from_confidence({"kick door": 70, "take key": 30})
    before = agent.decide(KEY, prior, step=0)
    _teach(agent)
    after = agent.decide(KEY, prior, step=0)
    assert len(after.neighbours) == 3 and {n.row.action for n in after.neighbours} == {"take key", "kick door"}
    take = after.policy.actions.index("take key")
    assert after.policy.estimate.advantages[take] > 0
    if variant == "paper":
        assert after.policy.scores[take] > before.policy.scores[take]
    else:
        assert before.chosen == "kick door" and after.chosen == "take key"
        assert after.policy.weight == pytest.approx(1.0 + 3 / 50 * 0.5)  # three episodes in memory


@pytest.mark.parametrize("variant", ["paper", "released"])
def test_decisions_replay_exactly_from_a_seed(variant: str) -> None:
    def run(seed: int) -> list[dict[str, object]]:
        config = JitRLConfig.paper_jericho() if variant == "paper" else JitRLConfig.released_jericho()
        agent = JitRL(config, seed=seed)
        _teach(agent)
        prior = prior_from_probs({"take key": 0.3, "kick door": 0.3, "look": 0.4})  # "look" is unseen: draws
        return [agent.decide(KEY, prior, step=s).record() for s in range(40)]

    records = run(5)
    assert records == run(5)
    assert json.loads(json.dumps(records)) == records
    assert records[0]["neighbours"] and set(records[0]) >= {"options", "prior", "q", "advantages", "scores", "chosen"}
    assert records != run(6)


def _key(observation: str, history: list[str]) -> StepKey:
    """A maze step's key: the observation with punctuation spaced out (the released tokeniser drops `north,`)."""
    return StepKey(re.sub(r"[^\w\s]", " ", observation), " ".join(["start", *history[-3:]]))


def test_the_maze_fills_memory_one_row_per_step() -> None:
    agent = JitRL(JitRLConfig.paper_jericho(), seed=0)
    walker = random.Random(0)
    maze = Maze(size=3, loops=2)
    won = 0
    for _ in range(4):
        obs, score = maze.reset(seed=1), 0.0
        keys: list[StepKey] = []
        actions: list[str] = []
        rewards: list[float] = []
        history: list[str] = []
        for _ in range(40):
            action = walker.choice(maze.admissible_actions() or ["north"])
            keys.append(_key(obs, history))
            step = maze.step(action)
            actions.append(action)
            rewards.append(step.score - score)
            history.append(action)
            obs, score = step.observation, step.score
            if step.done:
                break
        rows = agent.add_episode(keys, actions, rewards)
        assert len(rows) == len(actions)
        if maze.won:
            won += 1
            assert rows[-1].ret == 1.0 and rows[0].ret == pytest.approx(0.5 ** (len(rows) - 1))
    assert won >= 1 and agent.memory.episodes == 4
    start = _key(maze.reset(seed=1), [])
    hits = agent.memory.retrieve(start, agent.config.retrieval, step=0)
    assert hits and all(n.row.step == 0 and n.similarity == 1.0 for n in hits)


def test_the_core_imports_nothing_of_evoarena_but_itself() -> None:
    for path in (JITRL / name for name in CORE):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith("evoarena") or name in CORE_MODULES, (path.name, name)
