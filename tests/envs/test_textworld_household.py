"""tw-household, the ALFWorld-like families on TextWorld, played for real: every task type's walkthrough wins, the
appliance verbs are admissible exactly when the game accepts them, and the room text follows what moves."""

from __future__ import annotations

from pathlib import Path

import pytest

from evoarena.envs.textworld import TextWorldEnv

pytest.importorskip("textworld", reason="textworld is not installed: pip install 'evoarena[envs]'")

VERBS = {"clean": "clean", "heat": "heat", "cool": "cool", "look": "use desk lamp"}


@pytest.mark.parametrize("task", ["pick", "look", "clean", "heat", "cool", "pick-two"])
def test_every_task_type_is_won_by_its_walkthrough(tw_cache: Path, task: str) -> None:
    env = TextWorldEnv("tw-household", {"task": task, "objects": 2}, cache_dir=tw_cache)
    first = env.reset(3)
    assert first.startswith("Your task is to: ") and env.objective in first and "-= Room =-" in first
    plan = env.policy()
    assert plan and env.max_score == 1.0
    if task in VERBS:
        assert any(c.startswith(VERBS[task]) for c in plan)
    if task == "pick-two":
        assert first.startswith("Your task is to: put two ") and sum(c.startswith(("put", "insert")) for c in plan) == 2
    for command in plan:
        assert command in env.admissible_actions()
        step = env.step(command)
    assert step.done and env.won and step.score == 1.0


def test_appliance_verbs_follow_the_logic(tw_cache: Path) -> None:
    env = TextWorldEnv("tw-household", {"task": "heat", "objects": 2}, cache_dir=tw_cache)
    env.reset(3)
    plan = env.policy()
    heat = next(c for c in plan if c.startswith("heat "))
    thing = heat.removeprefix("heat ").split(" with ")[0]
    assert heat not in env.admissible_actions()  # not in hand yet
    assert "take" in env.step(heat).observation and env.policy() == plan  # the game refuses; the plan is unchanged
    for command in plan[: plan.index(heat)]:
        env.step(command)
    assert heat in env.admissible_actions()
    assert f"heat the {thing}" in env.step(heat).observation.lower()
    assert heat not in env.admissible_actions() and not any(c.startswith(f"cool {thing}")
                                                            for c in env.admissible_actions())
    again = env.step(heat)  # already hot: the game refuses too, and nothing changes
    assert "room temperature" in again.observation and again.score == 0.0 and not again.done
    assert "nothing out of the ordinary" in env.step(f"examine {thing}").observation


def test_the_room_text_follows_the_objects(tw_cache: Path) -> None:
    env = TextWorldEnv("tw-household", {"task": "pick", "objects": 2}, cache_dir=tw_cache)
    env.reset(3)
    take = next(c for c in env.policy() if c.startswith("take "))
    thing, source = take.removeprefix("take ").split(" from ")
    looked = env.step("look").observation
    assert all(f" {n}" in looked for n in ("sink basin", "microwave", "fridge", source, "desk lamp"))
    if f"open {source}" in env.admissible_actions():  # a closed container hides what is inside
        assert thing not in looked
        env.step(f"open {source}")
        assert f"The {source} contains" in env.step("look").observation
    assert thing in env.step("look").observation
    env.step(take)
    assert thing not in env.step("look").observation and thing in env.step("inventory").observation
