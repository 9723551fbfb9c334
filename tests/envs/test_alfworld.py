"""ALFWorld game files through TextWorld's PDDL environment, on a tiny trial the tests write (ALFWorld's data cannot
be fetched here; conftest.py's `alfworld_trial`): a pick-and-place in ALFWorld's format (PDDL domain and problem
with ALFRED-style object ids, a text grammar, traj_data.json), won by its actions, with ALFWorld's instance
numbering, exact-match commands, clones, name shuffling and one-line errors. Also ALFWorld's naming rule on its
own (pure Python)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from evoarena.envs import AlfworldEnv, Decision, Env, GameFileError, StepRecord, run_episode
from evoarena.envs.alfworld import PddlMissing, alfworld_names

WIN = ["go to countertop 1", "take mug 1 from countertop 1", "go to cabinet 2", "open cabinet 2",
       "move mug 1 to cabinet 2"]


@pytest.fixture
def trial(tmp_path: Path, alfworld_trial: Callable[..., Path]) -> Path:
    """The test trial in an ALFWorld-like directory; skips without textworld or the planner."""
    pytest.importorskip("textworld", reason="textworld is not installed: pip install 'evoarena[envs]'")
    pytest.importorskip("fast_downward", reason="fast-downward-textworld (the planner) is not installed: "
                                                "pip install 'evoarena[envs]'")
    return alfworld_trial(tmp_path / "pick_and_place_simple-Mug-None-Cabinet-1" / "trial_T0")


def test_the_trial_is_won_by_its_actions(trial: Path) -> None:
    argv = list(sys.argv)
    env = AlfworldEnv(trial)
    assert isinstance(env, Env) and env.name == "alfworld:trial_T0" and env.task_type == "pick_and_place_simple"
    first = env.reset(0)
    assert sys.argv == argv  # Fast Downward's translator rewrites sys.argv; the loader puts it back
    assert first.startswith("You are in the middle of a room") and "Welcome" not in first
    assert "cabinet 2, cabinet 1, and countertop 1" in first and env.goal == "put a mug in cabinet."
    assert env.max_score == 1.0 and env.score == 0.0 and not env.won
    assert env.admissible_actions() == ["go to cabinet 1", "go to cabinet 2", "go to countertop 1", "look"]
    assert env.policy() == WIN  # Fast Downward's plan, as ALFWorld's planner expert gives it
    for i, command in enumerate(WIN):
        assert command in env.admissible_actions()
        step = env.step(command)
        assert step.info["valid"] and step.info["moves"] == i + 1 and step.done == (i == len(WIN) - 1)
    assert step.observation == "You move the mug 1 to the cabinet 2." and step.score == 1.0 and env.won
    assert env.admissible_actions() == [] and env.policy() == []
    with pytest.raises(RuntimeError, match="reset first"):
        env.step("look")
    assert env.reset(0) == first and not env.won and env.score == 0.0
    env.close()


def test_the_episode_runner_plays_a_trial(trial: Path) -> None:
    env = AlfworldEnv(trial)

    class Planner:
        def decide(self, observation: str, history: Sequence[StepRecord], admissible: Sequence[str] | None) -> Decision:
            return Decision(env.policy()[0], {"actor": 1})

    episode = run_episode(env, Planner(), seed=0, max_steps=10)
    assert episode.won and episode.stopped == "done" and episode.final_score == episode.max_score == 1.0
    assert [s.action for s in episode.steps] == WIN and all(s.action in (s.admissible or ()) for s in episode.steps)


def test_only_an_admissible_command_does_anything(trial: Path) -> None:
    env = AlfworldEnv(trial)
    env.reset(0)
    before = env.admissible_actions()
    for action in ["Go to countertop 1", "go to countertop 1.", "go  to countertop 1", "fly"]:
        step = env.step(action)
        assert step.observation == "Nothing happens." and not step.info["valid"] and step.info["moves"] == 0
        assert env.admissible_actions() == before
    assert env.step("  go to countertop 1 ").info["valid"]  # surrounding spaces are fine, as in ALFWorld
    for command in ["take mug 1 from countertop 1", "go to cabinet 1", "open cabinet 1", "move mug 1 to cabinet 1"]:
        assert not env.step(command).done  # the other cabinet: not the goal
    assert not env.won and env.policy()[-1] == "move mug 1 to cabinet 2"


def test_a_clone_replays_to_the_same_state_and_is_independent(trial: Path) -> None:
    env = AlfworldEnv(trial)
    env.reset(0)
    for command in WIN[:2]:
        env.step(command)
    env.step("fly")  # not carried out, so not replayed
    twin = env.clone()
    assert twin.admissible_actions() == env.admissible_actions() and twin.policy() == env.policy() == WIN[2:]
    for command in WIN[2:]:
        twin.step(command)
    assert twin.won and not env.won and env.policy() == WIN[2:]  # the twin's moves left this one where it was
    for command in WIN[2:]:
        env.step(command)
    assert env.won


def test_shuffled_names_follow_the_seed(trial: Path) -> None:
    env = AlfworldEnv(trial, shuffle_names=True)
    firsts = {seed: env.reset(seed) for seed in range(8)}
    assert len(set(firsts.values())) == 2  # which cabinet is "cabinet 1" changes with the seed
    assert all(env.reset(seed) == text for seed, text in firsts.items())  # the same seed, the same names
    assert AlfworldEnv(trial).reset(5) == AlfworldEnv(trial).reset(6)  # without shuffling the seed changes nothing


def test_files_that_are_not_games_fail_in_one_line(trial: Path, tmp_path: Path,
                                                   alfworld_trial: Callable[..., Path]) -> None:
    bad_json = tmp_path / "bad.tw-pddl"
    bad_json.write_text("{not json")
    no_grammar = tmp_path / "nogrammar" / "game.tw-pddl"
    no_grammar.parent.mkdir()
    game = json.loads((trial / "game.tw-pddl").read_text())
    no_grammar.write_text(json.dumps({k: game[k] for k in ("pddl_domain", "pddl_problem")}))
    bad_pddl = alfworld_trial(tmp_path / "badpddl", pddl_problem="(define (problem broken")
    cases = {tmp_path / "missing": "no such file", tmp_path: "no game.tw-pddl", bad_json: "not JSON",
             no_grammar.parent: "no 'grammar' text", bad_pddl: "cannot load"}
    for path, why in cases.items():
        with pytest.raises(GameFileError, match=why) as err:
            AlfworldEnv(path)
        assert str(path) in str(err.value) and "\n" not in str(err.value)
    mute = alfworld_trial(tmp_path / "mute", grammar=game["grammar"].replace("#GotoLocation.feedback#", "#nowhere#"))
    env = AlfworldEnv(mute)  # a grammar symbol is looked up only when the text is written
    env.reset(0)
    with pytest.raises(GameFileError, match="failed on 'go to countertop 1': .*nowhere") as err:
        env.step("go to countertop 1")
    assert "\n" not in str(err.value)


def test_closing_one_of_two_environments_leaves_the_process_sound(trial: Path) -> None:
    """Unloading a planner library copy while another is loaded used to crash the interpreter at exit (SIGSEGV)."""
    script = ("import sys\nfrom evoarena.envs import AlfworldEnv\nkept, closed = AlfworldEnv(sys.argv[1]), "
              "AlfworldEnv(sys.argv[1])\nkept.reset(0)\nclosed.reset(0)\nclosed.close()\nprint('ok')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    run = subprocess.run([sys.executable, "-c", script, str(trial)], capture_output=True, text=True, timeout=120,
                         env=env)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-500:]


def test_a_missing_planner_is_named(trial: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import textworld.envs.pddl.pddl as pddl

    monkeypatch.setattr(pddl, "fast_downward_missing", True)
    with pytest.raises(PddlMissing, match="fast-downward-textworld"):
        AlfworldEnv(trial)


def test_alfworld_numbering() -> None:
    ids = ["cabinet_bar__minus_00_dot_50", "cabinet_bar__plus_00_dot_20", "sink_bar__plus_00_dot_71_bar_sinkbasin",
           "sink_bar__plus_00_dot_71", "agent1", "light_minus_switch"]
    names = alfworld_names(ids)
    assert names["cabinet_bar__minus_00_dot_50"] == "cabinet 2" and names["cabinet_bar__plus_00_dot_20"] == "cabinet 1"
    assert names["sink_bar__plus_00_dot_71_bar_sinkbasin"] == "sinkbasin 1"
    assert names["sink_bar__plus_00_dot_71"] == "sink 1"
    assert names["agent1"] == "agent1" and names["light_minus_switch"] == "light-switch"
    shuffled = [alfworld_names(ids, random.Random(seed)) for seed in range(8)]
    assert all(sorted(n.values()) == sorted(names.values()) for n in shuffled)  # the same names, dealt differently
    assert len({n["cabinet_bar__plus_00_dot_20"] for n in shuffled}) == 2
