"""Interactive environments (issue 15): the `Env` protocol, a seeded grid maze, TextWorld games (`TextWorldEnv`,
the optional `envs` extra; textworld itself is imported only when a game is played), loaders for user-supplied
Jericho ROMs (`JerichoEnv`) and ALFWorld game files (`AlfworldEnv`, `load_games` for a directory of either; jericho
and textworld are imported only when one is loaded), the episode runner with one step budget for actions and
meta-actions, and learning-curve metrics."""

from evoarena.envs.alfworld import AlfworldEnv
from evoarena.envs.base import Env, Step
from evoarena.envs.episode import Actor, Decision, Episode, StepRecord, run_episode
from evoarena.envs.jericho_env import JerichoEnv
from evoarena.envs.library import GameList, load_games
from evoarena.envs.loaders import GameFileError
from evoarena.envs.maze import Maze
from evoarena.envs.metrics import auc, late_mean, success_by_family
from evoarena.envs.textworld import TextWorldEnv

__all__ = ["Actor", "AlfworldEnv", "Decision", "Env", "Episode", "GameFileError", "GameList", "JerichoEnv", "Maze",
           "Step", "StepRecord", "TextWorldEnv", "auc", "late_mean", "load_games", "run_episode",
           "success_by_family"]
