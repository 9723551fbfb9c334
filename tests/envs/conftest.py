"""Games for the environment tests: one TextWorld cache directory per test session, so each tiny game is generated
once (about a second each) and every test that plays it reuses the files; and a tiny ALFWorld trial the tests write
(ALFWorld's data cannot be fetched here)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tw_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's TextWorld game cache; skips the test when textworld (the `envs` extra) is not installed."""
    pytest.importorskip("textworld", reason="textworld is not installed: pip install 'evoarena[envs]'")
    return tmp_path_factory.mktemp("tw_games")


# A pick-and-place trial in ALFWorld's format, written for the tests (not ALFWorld's domain or grammar, which are
# far larger): ALFRED-style object ids, two openable cabinets, the goal is the mug in the first one by id.
DOMAIN = """
(define (domain tinyhouse)
 (:requirements :adl :typing)
 (:types agent location receptacle object)
 (:predicates (atLocation ?a - agent ?l - location) (receptacleAtLocation ?r - receptacle ?l - location)
              (inReceptacle ?o - object ?r - receptacle) (openable ?r - receptacle) (opened ?r - receptacle)
              (holds ?a - agent ?o - object) (holdsAny ?a - agent) (checked ?l - location))
 (:action look
   :parameters (?a - agent ?l - location)
   :precondition (atLocation ?a ?l)
   :effect (checked ?l))
 (:action GotoLocation
   :parameters (?a - agent ?lStart - location ?lEnd - location ?r - receptacle)
   :precondition (and (atLocation ?a ?lStart) (receptacleAtLocation ?r ?lEnd) (not (= ?lStart ?lEnd)))
   :effect (and (not (atLocation ?a ?lStart)) (atLocation ?a ?lEnd)))
 (:action OpenObject
   :parameters (?a - agent ?l - location ?r - receptacle)
   :precondition (and (openable ?r) (atLocation ?a ?l) (receptacleAtLocation ?r ?l) (not (opened ?r)))
   :effect (opened ?r))
 (:action PickupObject
   :parameters (?a - agent ?l - location ?o - object ?r - receptacle)
   :precondition (and (atLocation ?a ?l) (receptacleAtLocation ?r ?l) (inReceptacle ?o ?r) (not (holdsAny ?a))
                      (or (not (openable ?r)) (opened ?r)))
   :effect (and (not (inReceptacle ?o ?r)) (holds ?a ?o) (holdsAny ?a)))
 (:action PutObject
   :parameters (?a - agent ?l - location ?o - object ?r - receptacle)
   :precondition (and (holds ?a ?o) (atLocation ?a ?l) (receptacleAtLocation ?r ?l)
                      (or (not (openable ?r)) (opened ?r)))
   :effect (and (inReceptacle ?o ?r) (not (holds ?a ?o)) (not (holdsAny ?a)))))
"""
MUG, SHELF = "Mug_bar__plus_00_dot_10_bar__plus_00_dot_90", "CounterTop_bar__plus_01_dot_00"
LOW, HIGH = "Cabinet_bar__minus_00_dot_50", "Cabinet_bar__plus_00_dot_20"  # sorted: LOW first, so "cabinet 2"
PROBLEM = f"""
(define (problem tiny1)
 (:domain tinyhouse)
 (:objects agent1 - agent loc_bar_1 loc_bar_2 loc_bar_3 - location {SHELF} {LOW} {HIGH} - receptacle
           {MUG} Apple_bar__minus_02_dot_00 - object)
 (:init (atLocation agent1 loc_bar_3) (receptacleAtLocation {SHELF} loc_bar_1)
        (receptacleAtLocation {LOW} loc_bar_2) (receptacleAtLocation {HIGH} loc_bar_2)
        (openable {LOW}) (openable {HIGH})
        (inReceptacle {MUG} {SHELF}) (inReceptacle Apple_bar__minus_02_dot_00 {SHELF}))
 (:goal (inReceptacle {MUG} {LOW})))
"""
GRAMMAR = r'''grammar :: """
{
  "intro": [{"rhs": "-= Welcome to TextWorld, ALFRED! =-\n\n#look.feedback#\n\n#task#"}],
  "task": [{"rhs": "Your task is to: put a mug in cabinet."}],
  "look.feedback": [{"rhs": "You are in the middle of a room. Looking quickly around you, you see [{r.name | receptacleatlocation(r:receptacle, l:location)}]."}],
  "GotoLocation.feedback": [{"rhs": "You arrive at {r.name}. #examineReceptacle.feedback#"}],
  "OpenObject.feedback": [{"rhs": "You open the {r.name}. #examineReceptacle.feedback#"}],
  "PickupObject.feedback": [{"rhs": "You pick up the {o.name} from the {r.name}."}],
  "PutObject.feedback": [{"rhs": "You move the {o.name} to the {r.name}."}],
  "examineReceptacle.feedback": [
    {"condition": "openable(r:receptacle) & opened(r:receptacle)",
     "rhs": "The {r.name} is open. In it, you see [{o.indefinite + ' ' + o.name | inreceptacle(o:object, r:receptacle)}]."},
    {"condition": "openable(r:receptacle)", "rhs": "The {r.name} is closed."},
    {"rhs": "On the {r.name}, you see [{o.indefinite + ' ' + o.name | inreceptacle(o:object, r:receptacle)}]."}],
  "list_empty": [{"rhs": "nothing"}], "list_separator": [{"rhs": ", "}], "list_last_separator": [{"rhs": ", and "}]
}
""";
action look { template :: "look"; feedback :: "#look.feedback#"; }
action GotoLocation { template :: "go to [{r.name | receptacleatlocation(r:receptacle, lend:location)}]"; feedback :: "#GotoLocation.feedback#"; }
action OpenObject { template :: "open {r}"; feedback :: "#OpenObject.feedback#"; }
action PickupObject { template :: "take {o} from {r}"; feedback :: "#PickupObject.feedback#"; }
action PutObject { template :: "move {o} to {r}"; feedback :: "#PutObject.feedback#"; }
'''  # noqa: E501


def write_alfworld_trial(directory: Path, **changes: object) -> Path:
    """A trial directory as ALFWorld's data holds them: game.tw-pddl and traj_data.json."""
    directory.mkdir(parents=True, exist_ok=True)
    game = {"pddl_domain": DOMAIN, "pddl_problem": PROBLEM, "grammar": GRAMMAR, "solvable": True, **changes}
    (directory / "game.tw-pddl").write_text(json.dumps(game))
    (directory / "traj_data.json").write_text(json.dumps({"task_type": "pick_and_place_simple"}))
    return directory


@pytest.fixture
def alfworld_trial() -> Callable[..., Path]:
    """`write_alfworld_trial(directory, **changes)`: writes the test trial there (changes replace game file keys)."""
    return write_alfworld_trial
