"""`load_games`: a directory of user-supplied games becomes one factory per game — Z-machine story files as
JerichoEnv, ALFWorld trials as AlfworldEnv, skipping the trials ALFWorld would skip — and nothing is loaded until a
factory is called."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from evoarena.envs import AlfworldEnv, GameFileError, JerichoEnv, load_games
from evoarena.envs.textworld import make_game


def _library(root: Path, alfworld_trial: Callable[..., Path]) -> Path:
    alfworld_trial(root / "alfworld" / "pick_and_place_simple-Mug-None-Cabinet-1" / "trial_T0")
    alfworld_trial(root / "alfworld" / "pick_and_place_simple-Mug-None-Cabinet-2" / "trial_T1", solvable=False)
    alfworld_trial(root / "alfworld" / "pick_and_place_simple-Mug-None-Cabinet-3" / "trial_T2", solvable=None)
    alfworld_trial(root / "alfworld" / "pick_and_place_simple-Mug_movable-None-Cabinet-1" / "trial_T3")
    (root / "roms").mkdir()
    (root / "roms" / "README.txt").write_text("not a game")
    return root


def test_games_are_listed_without_loading_them(tmp_path: Path, alfworld_trial: Callable[..., Path]) -> None:
    root = _library(tmp_path, alfworld_trial)
    (root / "roms" / "zork1.z5").write_bytes(b"not even a story file")  # only loading would notice
    found = load_games(root)
    assert list(found.games) == ["alfworld/pick_and_place_simple-Mug-None-Cabinet-1/trial_T0/game.tw-pddl",
                                 "roms/zork1.z5"]
    assert sorted(found.skipped) == [f"alfworld/{d}/game.tw-pddl" for d in [
        "pick_and_place_simple-Mug-None-Cabinet-2/trial_T1", "pick_and_place_simple-Mug-None-Cabinet-3/trial_T2",
        "pick_and_place_simple-Mug_movable-None-Cabinet-1/trial_T3"]]
    assert "not marked solvable" in found.skipped[next(k for k in found.skipped if "T1" in k)]
    assert "movable" in found.skipped[next(k for k in found.skipped if "T3" in k)]
    with pytest.raises(GameFileError, match="zork1.z5 is not a Z-machine story file"):
        found.games["roms/zork1.z5"]()
    with pytest.raises(GameFileError, match="no such file or directory"):
        load_games(tmp_path / "nowhere")


def test_the_factories_play(tmp_path: Path, tw_cache: Path, alfworld_trial: Callable[..., Path]) -> None:
    pytest.importorskip("jericho", reason="jericho is not installed: pip install 'evoarena[envs]'")
    pytest.importorskip("fast_downward", reason="fast-downward-textworld is not installed: "
                                                "pip install 'evoarena[envs]'")
    root = _library(tmp_path, alfworld_trial)
    game = make_game("custom", 1, {"world_size": 2, "nb_objects": 3, "quest_length": 2}, tw_cache)
    shutil.copy(game.z8, root / "roms" / "tiny.z8")
    found = load_games(root, valid_actions=True)
    rom = found.games["roms/tiny.z8"]()
    assert isinstance(rom, JerichoEnv) and rom.valid_actions and rom.reset(1).startswith("Welcome to TextWorld")
    trial = found.games["alfworld/pick_and_place_simple-Mug-None-Cabinet-1/trial_T0/game.tw-pddl"]()
    assert isinstance(trial, AlfworldEnv) and trial.reset(0) and trial.goal == "put a mug in cabinet."
    for command in trial.policy():
        trial.step(command)
    assert trial.won
    one = load_games(root / "roms" / "tiny.z8")  # a single file
    assert list(one.games) == ["tiny.z8"] and not one.skipped
