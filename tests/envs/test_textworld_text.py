"""The TextWorld adapter's parts that need no game: cleaning the game's text, normalising and refusing actions,
checking family settings, one-line errors, the cache directory, publishing a generated game when another process
got there first, tw-keydoor's seeded layout and tw-household's seeded scenes and plans. None of these imports
textworld."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evoarena.envs.textworld import FAMILIES, TextWorldEnv, TextWorldMissing, clean, default_cache_dir, normalise_action
from evoarena.envs.textworld.games import _complete, _publish, game_key, one_line, textworld_module
from evoarena.envs.textworld.household import TASKS, objective, plan, scene
from evoarena.envs.textworld.keydoor import BACK, layout, route

SRC = Path(__file__).resolve().parents[2] / "src"
BANNER = "\n\n\n                    ________  ________\n                   |        \\|        \\\n" \
         "              \\$$      \\$$  \\$$$$$$ \n\n"
STATUS = "\n\n>" + " " * 100 + "-= Studio =-0/2"


def test_clean_drops_the_banner_the_prompt_and_status_line_and_the_end_menu() -> None:
    first = BANNER + "Welcome to TextWorld! Go south.\n\n-= Spare Room =-\nA room.\n\n\n\nExits: south." + STATUS
    assert clean(first) == "Welcome to TextWorld! Go south.\n\n-= Spare Room =-\nA room.\n\nExits: south."
    last = ("\nYou close the box.\n\n\nYour score has just gone up by one point.\n\n\n" + " " * 55 +
            "*** The End ***\n\nYou scored 1 out of a possible 1, in 3 turns.\n\n\n"
            "Would you like to RESTART, RESTORE a saved game, QUIT or UNDO the last command?" + STATUS)
    assert clean(last) == ("You close the box.\n\nYour score has just gone up by one point.\n\n*** The End ***\n\n"
                           "You scored 1 out of a possible 1, in 3 turns.")
    assert clean("You take the key.\n\n\n\n>" + " " * 40) == "You take the key."
    assert clean("a\n> b\nc") == "a\n> b\nc"  # a '>' inside the text, not the final prompt, stays


@pytest.mark.parametrize(("action", "command"), [
    ("go north", "go north"), ("  Go   North. ", "Go North"), ("> open chest!", "open chest"),
    ("take key\n", "take key"), ("take white onion and yellow onion from fridge",
                                 "take white onion and yellow onion from fridge"),
])
def test_actions_are_normalised_to_one_command(action: str, command: str) -> None:
    assert normalise_action(action) == (command, None)


@pytest.mark.parametrize(("action", "why"), [
    ("go north then go west", "one command per step"), ("go north; go west", "one command per step"),
    ("go north. go west", "one command per step"), ("take onion, apple", "one command per step"),
    ("go\nnorth", "several lines"), ("   ", "empty"), ("take " + "a" * 200, "at most 198"),
    ("take " + "é" * 100, "at most 198"),  # bytes, not characters
])
def test_chained_empty_and_overlong_actions_are_refused(action: str, why: str) -> None:
    sent, refused = normalise_action(action)
    assert refused is not None and why in refused and sent == action


def test_settings_are_completed_and_checked_with_one_line_errors() -> None:
    assert FAMILIES["custom"].settings(None) == {"world_size": 5, "nb_objects": 10, "quest_length": 5}
    assert FAMILIES["tw-cooking"].settings({"recipe": 2, "cut": True})["cut"] is True
    assert FAMILIES["tw-cooking"].settings({})["split"] is None
    bad = [("custom", {"rooms": 3}, "unknown setting 'rooms'"), ("custom", {"world_size": "5"}, "must be int"),
           ("custom", {"world_size": True}, "must be int"), ("tw-cooking", {"cut": 1}, "must be bool"),
           ("tw-cooking", {"go": 2}, "must be one of [1, 6, 9, 12]"),
           ("tw-treasure_hunter", {}, "'level' is required"), ("tw-keydoor", {"variant": "x"}, "one of")]
    for family, settings, message in bad:
        with pytest.raises(ValueError, match=re.escape(message)) as err:
            FAMILIES[family].settings(settings)
        assert "\n" not in str(err.value) and family in str(err.value)
    with pytest.raises(ValueError, match="unknown family 'zork'"):
        TextWorldEnv("zork")


def test_one_line_keeps_the_first_meaningful_line() -> None:
    exc = RuntimeError("\n-== ni =-\nFAIL: 2\nProblem. You wrote...\n" + "x" * 500)
    assert one_line(exc) == "RuntimeError: FAIL: 2"
    assert len(one_line(ValueError("y" * 1000))) == 300


def test_importing_the_envs_does_not_import_textworld() -> None:
    code = "import sys, evoarena.envs, evoarena.envs.textworld; assert 'textworld' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": str(SRC)})


def test_a_missing_textworld_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "textworld", None)
    with pytest.raises(TextWorldMissing, match=r"pip install 'evoarena\[envs\]'"):
        textworld_module()


def test_the_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("EVOARENA_TEXTWORLD_DIR", raising=False)
    monkeypatch.setenv("EVOARENA_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c" / "textworld"
    monkeypatch.setenv("EVOARENA_TEXTWORLD_DIR", str(tmp_path / "tw"))
    assert default_cache_dir() == tmp_path / "tw"


def test_the_cache_key_names_version_family_settings_and_seed() -> None:
    base = game_key("1.7.0", "custom", {"world_size": 5}, 1)
    assert base == game_key("1.7.0", "custom", {"world_size": 5}, 1)
    others = {game_key("1.7.1", "custom", {"world_size": 5}, 1), game_key("1.7.0", "tw-cooking", {"world_size": 5}, 1),
              game_key("1.7.0", "custom", {"world_size": 6}, 1), game_key("1.7.0", "custom", {"world_size": 5}, 2)}
    assert base not in others and len(others) == 4


def _game_dir(path: Path, marker: str) -> Path:
    path.mkdir(parents=True)
    for name in ("game.z8", "game.json", "spec.json"):
        (path / name).write_text(marker)
    return path


def test_publishing_keeps_the_first_complete_copy_and_replaces_a_broken_one(tmp_path: Path) -> None:
    final = _game_dir(tmp_path / "game", "first")
    late = _game_dir(tmp_path / ".tmp-late", "late")
    _publish(late, final)  # another process published first: its copy stays
    assert (final / "game.z8").read_text() == "first" and _complete(final)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "game.z8").write_text("half")  # no sidecar: a crash or a manual deletion
    _publish(_game_dir(tmp_path / ".tmp-new", "new"), broken)
    assert (broken / "game.json").read_text() == "new" and not list(tmp_path.glob(".stale-*"))


def test_keydoor_layout_is_seeded_and_the_vault_is_behind_one_door() -> None:
    a, b, c = layout(5, 3), layout(5, 3), layout(5, 4)
    assert a == b and a != c
    for seed in range(30):
        world = layout(6, seed)
        names, edges = world["names"], world["edges"]
        vault = len(names) - 1
        assert len(set(names)) == 6 and len(edges) == 5
        assert [e for e in edges if vault in (e[0], e[2])] == [e for e in edges if e[2] == vault]  # a leaf
        assert all(e[0] != 0 for e in edges if e[2] == vault)  # the door is never in the start room
        assert vault not in world["spots"].values()  # keys and furniture are outside the vault
        assert world["spots"]["other"] != world["spots"]["container"]  # key-moved moves the key to another room
        path = route(world, 0, vault)
        assert path[-1][1] == vault and len(path) >= 2
        back = route(world, vault, 0)
        assert [BACK[d] for d, _ in back][::-1] == [d for d, _ in path]
    with pytest.raises(ValueError, match="rooms must be in 3..12"):
        layout(2, 0)


def test_household_scenes_are_seeded_and_plans_open_each_container_once() -> None:
    assert scene("heat", 4, 1) == scene("heat", 4, 1) != scene("heat", 4, 2)
    for task in TASKS:
        for seed in range(20):
            world = scene(task, 4, seed)
            targets, goal, places = world["targets"], world["goal"], world["places"]
            assert len(targets) == (2 if task == "pick-two" else 1) and len(places) == len(targets) + 4
            assert all(places[t] != goal for t in targets)  # never already done
            assert (goal is None) == (task == "look")
            steps = plan(world)
            opened = [names[0] for rule, names in steps if rule == "open/c"]
            assert len(opened) == len(set(opened)) and set(opened) <= set(world["containers"])
            assert objective(world).startswith("Your task is to: ")
            if task == "pick-two":
                assert targets[0] != targets[1] and targets[0].split()[-1] == targets[1].split()[-1]
    assert objective(scene("pick-two", 0, 0)).count("two ") == 1
    with pytest.raises(ValueError, match="task must be one of"):
        scene("slice", 4, 0)
    with pytest.raises(ValueError, match="objects must be in 0..10"):
        scene("pick", 11, 0)
