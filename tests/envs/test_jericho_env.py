"""User-supplied Z-machine story files through Jericho, on games the tests build (no ROM can be fetched here): a
TextWorld game (the same text as TextWorldEnv step by step; Jericho reports no score for it, the end banner ends
it) and a hand-written Inform 7 game with dice, a win and a death (seeding, banners, chained commands). Jericho's
valid actions and scores for the ROMs it supports cannot be exercised without those ROMs."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from evoarena.envs import Env, JerichoEnv, TextWorldEnv
from evoarena.envs.jericho_env import end_banner
from evoarena.envs.loaders import GameFileError
from evoarena.envs.textworld import make_game

pytest.importorskip("jericho", reason="jericho is not installed: pip install 'evoarena[envs]'")
pytest.importorskip("textworld", reason="textworld is not installed (the tests build their games with it)")

TINY = {"world_size": 2, "nb_objects": 3, "quest_length": 2}
DICE = '''"Dice Lab" by "evoarena tests"

The Lab is a room. "A bare lab with a brass button on the wall."
The die is in the Lab. The trophy is in the Lab.
The button is in the Lab. It is fixed in place.
Rolling is an action applying to one thing. Understand "roll [something]" as rolling.
Carry out rolling: say "You roll [a random number between 1 and 30000]."
After taking the trophy: end the story finally saying "You have won".
Instead of pushing the button: end the story saying "You have died".
'''


@pytest.fixture(scope="module")
def dice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Inform 7 dice game, compiled with the Inform 7 that textworld bundles (about a second)."""
    from textworld.generator.inform7.world2inform7 import compile_inform7_game

    path = tmp_path_factory.mktemp("rom") / "dice.z8"
    compile_inform7_game(DICE, str(path))
    return path


def test_a_textworld_game_plays_as_in_textworld_without_a_score(tw_cache: Path) -> None:
    tw = TextWorldEnv("custom", TINY, cache_dir=tw_cache)
    first = tw.reset(1)
    assert tw.game is not None
    env = JerichoEnv(tw.game.z8, valid_actions=True)
    assert isinstance(env, Env) and env.name == "jericho:game"
    assert not env.supported and env.max_score == 0.0  # Jericho does not know the ROM: no maximum
    assert env.reset(1) == first and "TEXTWORLD" not in first  # the same cleaned text as TextWorldEnv
    assert env.admissible_actions() is None  # asked for, but Jericho has none for an unknown ROM
    plan = tw.policy()
    for i, command in enumerate(plan):
        expected, step = tw.step(command), env.step(command)
        assert step.observation == expected.observation and step.info["steps"] == i + 1
    assert expected.score == tw.max_score == 1.0 and tw.won  # TextWorld's tracker scores it
    assert step.score == 0.0 and "moves" not in step.info  # Jericho does not
    assert step.done and env.won and not env.lost and step.info["banner"] == "The End"  # the banner ends it
    assert "RESTART" not in step.observation and "RESTART" in step.info["raw"]
    with pytest.raises(RuntimeError, match="reset first"):
        env.step("look")
    assert env.reset(1) == first and not env.won  # a reset starts again


def test_a_clone_is_independent(tw_cache: Path) -> None:
    game = make_game("custom", 1, TINY, tw_cache)
    env = JerichoEnv(game.z8)
    env.reset(1)
    env.step("go south")
    twin = env.clone()
    assert twin.step("close box").done and twin.won
    assert not env.won and "-= Studio =-" in env.step("look").observation  # untouched by the twin's moves
    assert env.step("close box").done and env.won
    env.close()
    assert twin.reset(1).startswith("Welcome to TextWorld")  # the twin has its own interpreter


def _rolls(env: JerichoEnv, seed: int, n: int = 3) -> list[str]:
    env.reset(seed)
    return [env.step("roll die").observation for _ in range(n)]


def test_the_seed_drives_the_interpreter(dice: Path) -> None:
    env = JerichoEnv(dice)
    zero, one = _rolls(env, 0), _rolls(env, 1)
    assert all(r.startswith("You roll ") for r in zero) and len(set(zero)) == 3
    assert _rolls(env, 0) == zero and _rolls(JerichoEnv(dice), 1) == one  # same seed, same episode (0 included)
    assert len({tuple(_rolls(env, s)) for s in range(4)}) == 4  # other seeds, other rolls
    fixed = JerichoEnv(dice, seed_policy="fixed", fixed_seed=3)
    assert _rolls(fixed, 0) == _rolls(fixed, 9) == _rolls(env, 3) and fixed.rng_seed(9) == 3
    with pytest.raises(ValueError, match="no walkthrough seed"):
        JerichoEnv(dice, seed_policy="walkthrough")
    for bad in (-1, 2**31, True):
        with pytest.raises(ValueError, match="seed"):
            env.reset(bad)


def test_end_banners_end_the_episode(dice: Path) -> None:
    env = JerichoEnv(dice)
    env.reset(1)
    died = env.step("push button")
    assert died.done and env.lost and not env.won and died.observation == "*** You have died ***"
    env.reset(1)
    won = env.step("take trophy")
    assert won.done and env.won and not env.lost and won.info["banner"] == "You have won"
    plain = JerichoEnv(dice, detect_end=False)  # Jericho alone: an unknown ROM ends only when it halts
    plain.reset(1)
    assert not plain.step("take trophy").done and not plain.won
    assert plain.step("quit").done and not plain.won and not plain.lost
    assert end_banner("*** Chapter 1 ***\nYou wake.") == ""  # a banner without the RESTART menu is not an end


def test_one_command_per_step_and_chains_reach_the_game(dice: Path) -> None:
    env = JerichoEnv(dice)
    env.reset(2)
    for action in ["", "roll die\nroll die", "roll " + "x" * 200]:
        step = env.step(action)
        assert step.observation.startswith("Action refused") and step.info["refused"] and step.info["steps"] == 0
    chained = env.step(" roll die. roll die ")  # the game's parser runs both; no tracker to go stale
    assert chained.observation.count("You roll") == 2 and chained.info["command"] == "roll die. roll die"


def test_files_jericho_cannot_load_fail_in_one_line(tmp_path: Path, dice: Path) -> None:
    story = dice.read_bytes()
    junk = tmp_path / "junk.z5"
    junk.write_bytes(b"\x99" * 4096)
    short = tmp_path / "short.z8"
    short.write_bytes(story[: len(story) // 2])
    crash = tmp_path / "crash.z8"  # a sound header over code that makes frotz divide by zero
    pc = int.from_bytes(story[6:8], "big")
    crash.write_bytes(story[:pc] + b"\xff" * 4000 + story[pc + 4000:])
    cases = {tmp_path / "missing.z8": "no such file", tmp_path: "not a file", junk: "version byte 153",
             short: "truncated", crash: "crashed"}
    for path, why in cases.items():
        with pytest.raises(GameFileError, match=why) as err:
            JerichoEnv(path)
        assert str(path) in str(err.value) and "\n" not in str(err.value) and isinstance(err.value, ValueError)


def test_valid_actions_are_off_unless_asked_and_a_failure_turns_them_off(dice: Path) -> None:
    assert JerichoEnv(dice).admissible_actions() is None  # off by default
    env = JerichoEnv(dice, valid_actions=True)
    env.reset(1)
    env._fz.is_fully_supported = True  # as for a ROM Jericho knows, whose generator then fails (no spacy model)

    def fail() -> list[str]:
        raise OSError("Can't find model 'en_core_web_sm'")

    env._fz.get_valid_actions = fail
    with pytest.warns(RuntimeWarning, match="en_core_web_sm"):
        assert env.admissible_actions() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert env.admissible_actions() is None and "OSError" in env.valid_actions_error  # warned once


def test_close_then_reset_loads_again(dice: Path) -> None:
    with JerichoEnv(dice) as env:
        first = env.reset(1)
        env.close()
        with pytest.raises(RuntimeError, match="reset"):
            env.step("look")
        assert env.reset(1) == first and "Lab" in first
