"""TextWorld games as an `Env`, played for real (textworld 1.7.0 + jericho): reset/step/admissible/max_score, the
walkthrough wins with the full score, the same seed replays the same observations, clones are independent, chained
actions never reach the game, the cache reuses a generated game, tw-keydoor's variants keep the quest and change the
key, and the episode runner wins with a scripted actor."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from evoarena.envs import Decision, Env, StepRecord, run_episode
from evoarena.envs.textworld import GameError, TextWorldEnv, make_game

pytest.importorskip("textworld", reason="textworld is not installed: pip install 'evoarena[envs]'")

# Tiny settings per family: each game is generated in about a second and won in 2–8 commands.
TINY = {"custom": {"world_size": 2, "nb_objects": 3, "quest_length": 2}, "tw-cooking": {"recipe": 1},
        "tw-keydoor": {"rooms": 3}}


def _env(cache: Path, family: str = "custom", **settings: object) -> TextWorldEnv:
    return TextWorldEnv(family, {**TINY[family], **settings}, cache_dir=cache)


def test_reset_step_admissible_and_max_score(tw_cache: Path) -> None:
    env = _env(tw_cache)
    assert isinstance(env, Env) and env.name == "textworld:custom"
    first = env.reset(1)
    assert "TEXTWORLD" not in first and "$$" not in first and "-= " in first and not first.endswith("0/1")
    assert env.max_score == 1.0 and not env.won and env.score == 0.0
    admissible = env.admissible_actions()
    assert admissible and admissible == sorted(admissible) and "look" in admissible
    step = env.step("look")
    assert step.score == 0.0 and not step.done and step.observation.startswith("-= ")
    assert set(step.info) >= {"won", "lost", "moves", "raw"} and "-= " in step.info["raw"] and ">" in step.info["raw"]
    assert not step.observation.rstrip().endswith(">")
    nonsense = env.step("xyzzy")
    assert "verb" in nonsense.observation and not nonsense.done


@pytest.mark.parametrize("family", ["custom", "tw-cooking", "tw-keydoor"])
def test_the_walkthrough_wins_with_the_full_score(tw_cache: Path, family: str) -> None:
    env = _env(tw_cache, family)
    env.reset(1)
    plan, scores = env.policy(), []
    assert plan and env.objective
    for command in plan:
        assert command in env.admissible_actions()
        step = env.step(command)
        scores.append(step.score)
    assert step.done and env.won and step.info["won"] and not env.lost
    assert step.score == env.max_score and scores == sorted(scores)  # cumulative: never goes down
    assert "*** The End ***" in step.observation and "RESTART" not in step.observation
    assert env.admissible_actions() == [] and env.policy() == []
    with pytest.raises(RuntimeError, match="reset first"):
        env.step("look")
    if family == "tw-cooking":
        assert env.max_score == 2.0 and scores[-2:] == [1.0, 2.0]  # prepare meal, then eat it


def _play(env: TextWorldEnv, seed: int, steps: int) -> list[tuple[str, float]]:
    trace = [(env.reset(seed), 0.0)]
    for i in range(steps):
        admissible = env.admissible_actions() or ["look"]
        step = env.step(admissible[(3 * i + 1) % len(admissible)])
        trace.append((step.observation, step.score))
        if step.done:
            break
    return trace


def test_the_same_seed_replays_the_same_observations(tw_cache: Path) -> None:
    one, two = _env(tw_cache, "tw-cooking"), _env(tw_cache, "tw-cooking")
    trace = _play(one, 1, 12)
    assert len(trace) > 5 and len({obs for obs, _ in trace}) > 3
    assert _play(two, 1, 12) == trace  # another environment object
    assert _play(one, 1, 12) == trace  # the same one, reset again


def test_a_clone_is_independent(tw_cache: Path) -> None:
    env = _env(tw_cache, "tw-keydoor")
    env.reset(1)
    env.step(env.policy()[0])
    before = (env.admissible_actions(), env.policy(), env.score)
    twin = env.clone()
    assert (twin.admissible_actions(), twin.policy(), twin.score) == before
    for command in twin.policy():
        twin.step(command)
    assert twin.won and twin.score == twin.max_score
    assert not env.won and (env.admissible_actions(), env.policy(), env.score) == before
    for command in env.policy():
        env.step(command)
    assert env.won


def test_chained_actions_never_reach_the_game(tw_cache: Path) -> None:
    env = _env(tw_cache)
    env.reset(1)
    plan = env.policy()
    before = (env.admissible_actions(), env.policy())
    for action in [" then ".join(plan), "; ".join(plan), ". ".join(plan), "\n".join(plan), "go " + "x" * 200]:
        step = env.step(action)
        assert step.observation.startswith("Action refused") and "refused" in step.info and not step.done
        assert step.info["raw"] == "" and step.info["moves"] == 0
        assert (env.admissible_actions(), env.policy()) == before
    assert env.step(plan[0] + ".").info["command"] == plan[0]  # a trailing full stop is fine


def test_the_cache_reuses_a_generated_game(tw_cache: Path) -> None:
    settings = TINY["custom"]
    first = make_game("custom", 7, settings, tw_cache)
    mtime = first.z8.stat().st_mtime_ns
    second = make_game("custom", 7, settings, tw_cache)
    assert not first.cached and second.cached and second.directory == first.directory
    assert second.z8.stat().st_mtime_ns == mtime and second.json.is_file() and (first.directory / "game.ni").is_file()
    spec = json.loads((first.directory / "spec.json").read_text())
    assert spec["family"] == "custom" and spec["seed"] == 7 and spec["settings"] == settings
    assert not list(first.directory.parent.glob(".*"))  # no temporary directory left behind
    other = make_game("custom", 1, settings, tw_cache)  # the session's game of seed 1
    assert other.directory.parent == first.directory.parent and other.directory != first.directory


def test_a_generation_error_is_one_line(tw_cache: Path) -> None:
    with pytest.raises(GameError) as err:
        make_game("tw-treasure_hunter", 1, {"level": 99}, tw_cache)
    message = str(err.value)
    assert "\n" not in message and "tw-treasure_hunter" in message and "seed=1" in message
    assert not [p for p in tw_cache.rglob("*") if "treasure" in str(p) and p.is_file()]


def test_a_knowledge_base_from_the_working_directory_is_refused(tw_cache: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import textworld.generator.data as data

    make_game("custom", 1, TINY["custom"], tw_cache)
    monkeypatch.setattr(data.KnowledgeBase.default(), "logic_path", "textworld_data/logic")
    with pytest.raises(GameError, match="textworld_data/logic .*working directory"):
        make_game("custom", 12, TINY["custom"], tw_cache)
    assert make_game("custom", 1, TINY["custom"], tw_cache).cached  # a cached game still plays


def test_keydoor_variants_keep_map_and_quest_and_move_the_key(tw_cache: Path) -> None:
    envs = {v: _env(tw_cache, "tw-keydoor", variant=v) for v in ("base", "key-moved", "door-rule")}
    first = {v: env.reset(1) for v, env in envs.items()}
    plans = {v: env.policy() for v, env in envs.items()}
    assert len({env.objective for env in envs.values()}) == 1  # the same quest, stated the same way
    assert first["base"] == first["door-rule"]  # nothing visible changed at the start
    assert plans["base"][-1] == plans["key-moved"][-1] == plans["door-rule"][-1]  # take the treasure
    unlock = {v: next(c for c in plan if c.startswith("unlock")) for v, plan in plans.items()}
    assert unlock["base"] == unlock["key-moved"] != unlock["door-rule"]  # door-rule: the other key fits
    assert plans["base"] != plans["key-moved"]  # key-moved: fetched from somewhere else
    # the base game's key does not open the door-rule door: replaying base's plan does not win
    env = envs["door-rule"]
    for command in plans["base"]:
        if env.step(command).done:
            break
    assert not env.won
    for v in ("key-moved", "door-rule"):
        assert envs[v].reset(1) and run_episode(envs[v], _Oracle(envs[v]), seed=1, max_steps=20).won


class _Oracle:
    """A scripted actor that follows the environment's remaining winning plan."""

    def __init__(self, env: TextWorldEnv) -> None:
        self.env = env

    def decide(self, observation: str, history: Sequence[StepRecord], admissible: Sequence[str] | None) -> Decision:
        return Decision(self.env.policy()[0], {"actor": 1})


def test_run_episode_with_a_walkthrough_actor_wins_within_budget(tw_cache: Path) -> None:
    env = _env(tw_cache, "tw-cooking")
    env.reset(1)
    budget = len(env.policy()) + 1
    episode = run_episode(env, _Oracle(env), seed=1, max_steps=budget)
    assert episode.won and episode.stopped == "done" and episode.final_score == episode.max_score == 2.0
    assert len(episode.steps) == budget - 1 and episode.score_curve[-1] == 2.0
    assert all(s.admissible and s.action in s.admissible for s in episode.steps)
    assert episode.env == "textworld:tw-cooking" and episode.calls_by_type() == {"actor": budget - 1}
    short = run_episode(env, _Oracle(env), seed=1, max_steps=1)
    assert short.stopped == "budget" and not short.won
